import { describe, expect, test } from 'bun:test';
import type { Obj } from '../api/meta';
import { StatusError } from '../api/status';
import type { Attributes } from '../registry/admission';
import { PriorityAdmission } from './priority';

const pc = (name: string, value: number, extra: Record<string, unknown> = {}): Obj => ({
  metadata: { name },
  value,
  preemptionPolicy: 'PreemptLowerPriority',
  ...extra,
});
const plugin = (classes: Obj[]) =>
  new PriorityAdmission({
    get: async (name) => classes.find((c) => c.metadata.name === name),
    list: async () => classes,
  });
const podCreate = (spec: Record<string, unknown>): Attributes => ({
  operation: 'CREATE',
  group: '',
  version: 'v1',
  kind: 'Pod',
  resource: 'pods',
  subresource: '',
  namespace: 'default',
  name: 'p',
  object: { metadata: { name: 'p', namespace: 'default' }, spec: { containers: [], ...spec } },
  dryRun: false,
});
const refusal = async (p: Promise<void>) => {
  try {
    await p;
  } catch (e) {
    if (e instanceof StatusError) return `${e.code} ${e.message}`;
    throw e;
  }
  return 'admitted';
};

describe('Priority admission', () => {
  test('no class and no default: priority 0, PreemptLowerPriority', async () => {
    const a = podCreate({});
    await plugin([]).admit(a);
    expect(a.object.spec).toMatchObject({ priority: 0, preemptionPolicy: 'PreemptLowerPriority' });
    expect((a.object.spec as Record<string, unknown>).priorityClassName).toBeUndefined();
  });

  test('several defaults after a race: the one of lowest value', async () => {
    const a = podCreate({});
    await plugin([pc('b', 20, { globalDefault: true }), pc('a', 10, { globalDefault: true, preemptionPolicy: 'Never' })]).admit(a);
    expect(a.object.spec).toMatchObject({ priorityClassName: 'a', priority: 10, preemptionPolicy: 'Never' });
  });

  test('a preemptionPolicy other than the class computes is refused', async () => {
    const why = await refusal(plugin([pc('x', 5)]).admit(podCreate({ priorityClassName: 'x', preemptionPolicy: 'Never' })));
    expect(why).toBe(
      '403 pods "p" is forbidden: the string value of PreemptionPolicy (Never) must not be provided in pod spec; priority admission controller computed PreemptLowerPriority from the given PriorityClass name',
    );
    const same = podCreate({ priorityClassName: 'x', priority: 5 });
    expect(await refusal(plugin([pc('x', 5)]).admit(same))).toBe('admitted');
  });

  test('a class may become the default when it already is one', async () => {
    const classes = [pc('d', 1, { globalDefault: true })];
    const update = (name: string): Attributes => ({
      ...podCreate({}),
      operation: 'UPDATE',
      group: 'scheduling.svc.io',
      kind: 'PriorityClass',
      resource: 'priorityclasses',
      namespace: '',
      name,
      object: pc(name, 1, { globalDefault: true }),
    });
    expect(await refusal(plugin(classes).validate(update('d')))).toBe('admitted');
    expect(await refusal(plugin(classes).validate(update('e')))).toBe(
      '403 priorityclasses.scheduling.svc.io "e" is forbidden: PriorityClass d is already marked as default. Only one default can exist',
    );
  });
});
