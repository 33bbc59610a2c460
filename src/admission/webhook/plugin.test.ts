import { expect, test } from 'bun:test';
import { compileHooks } from './hooks';
import { dryRunRefusal } from './plugin';

const config = (sideEffects: string) =>
  compileHooks(
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'c' },
      webhooks: [{ name: 'w.example.com', sideEffects, clientConfig: { url: 'https://x' }, admissionReviewVersions: ['v1'] }],
    },
    'validating',
  )[0];

test('a dry run is refused by webhooks with side effects Unknown or Some (stored by an older server), with the reference message', () => {
  for (const s of ['Unknown', 'Some']) {
    const hook = config(s);
    if (!hook) throw new Error('no hook');
    const e = dryRunRefusal(hook, { dryRun: true });
    expect(e?.code).toBe(400);
    expect(e?.reason).toBe('BadRequest');
    expect(e?.message).toBe('admission webhook "w.example.com" does not support dry run');
    expect(dryRunRefusal(hook, { dryRun: false })).toBeUndefined();
  }
  for (const s of ['None', 'NoneOnDryRun']) {
    const hook = config(s);
    if (!hook) throw new Error('no hook');
    expect(dryRunRefusal(hook, { dryRun: true })).toBeUndefined();
  }
});
