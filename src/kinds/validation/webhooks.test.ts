import { describe, expect, test } from 'bun:test';
import type { Obj } from '../../api/meta';
import { fieldErrorText } from '../../api/status';
import { webhookConfigurationRules } from './webhooks';

// biome-ignore lint/suspicious/noExplicitAny: test data
type Any = any;
const validating = webhookConfigurationRules(false);
const mutating = webhookConfigurationRules(true);
const hook = (h: Any = {}): Any => ({
  name: 'a.example.com',
  clientConfig: { url: 'https://hooks.example.com/x' },
  sideEffects: 'None',
  admissionReviewVersions: ['v1'],
  ...h,
});
const cfg = (...webhooks: Any[]): Obj => ({ metadata: { name: 'c' }, webhooks });
const texts = (o: Obj, rules = validating) => rules(o).map((e) => `${e.field}: ${fieldErrorText(e)}`);

describe('webhook configurations', () => {
  test('a valid configuration', () => {
    expect(
      texts(cfg(hook(), hook({ name: 'b.example.com', clientConfig: { service: { namespace: 'd', name: 's', port: 443 } } }))),
    ).toEqual([]);
  });

  test('names: fully qualified, unique', () => {
    expect(texts(cfg(hook({ name: 'short.com' }), hook(), hook()))).toEqual([
      'webhooks[0].name: Invalid value: "short.com": should be a domain with at least three segments separated by dots',
      'webhooks[2].name: Duplicate value: "a.example.com"',
    ]);
    expect(texts(cfg(hook({ name: '' })))).toEqual(['webhooks[0].name: Required value']);
  });

  test('clientConfig: exactly one of url and service; url https without user, query or fragment; service path', () => {
    expect(texts(cfg(hook({ clientConfig: {} })))).toEqual([
      'webhooks[0].clientConfig: Required value: exactly one of url or service is required',
    ]);
    expect(texts(cfg(hook({ clientConfig: { url: 'http://u:p@h.example.com/x?q=1#f' } })))).toEqual([
      'webhooks[0].clientConfig.url: Invalid value: "http": \'https\' is the only allowed URL scheme; desired format: https://host[/path]',
      'webhooks[0].clientConfig.url: Invalid value: "u:p": user information is not permitted in the URL',
      'webhooks[0].clientConfig.url: Invalid value: "f": fragments are not permitted in the URL',
      'webhooks[0].clientConfig.url: Invalid value: "q=1": query parameters are not permitted in the URL',
    ]);
    expect(texts(cfg(hook({ clientConfig: { service: { namespace: 'd', name: 's', port: 443, path: 'x//Y' } } })))).toEqual([
      'webhooks[0].clientConfig.service.path: Invalid value: "x//Y": must start with a \'/\'',
      // As the reference: the first character is taken as the leading '/' even when it is not one.
      'webhooks[0].clientConfig.service.path: Invalid value: "x//Y": segment[0] may not be empty',
      'webhooks[0].clientConfig.service.path: Invalid value: "x//Y": segment[1] may not be empty',
      "webhooks[0].clientConfig.service.path: Invalid value: \"x//Y\": segment[2]: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ]);
  });

  test('sideEffects, admissionReviewVersions, timeout, policies', () => {
    expect(
      texts(
        cfg(
          hook({
            sideEffects: 'Some',
            admissionReviewVersions: ['v2', 'v2'],
            timeoutSeconds: 0,
            failurePolicy: 'Maybe',
            matchPolicy: 'Loose',
          }),
        ),
      ),
    ).toEqual([
      'webhooks[0].failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore"',
      'webhooks[0].matchPolicy: Unsupported value: "Loose": supported values: "Equivalent", "Exact"',
      'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"',
      'webhooks[0].timeoutSeconds: Invalid value: 0: the timeout value must be between 1 and 30 seconds',
      'webhooks[0].admissionReviewVersions[1]: Invalid value: "v2": duplicate version',
      'webhooks[0].admissionReviewVersions: Invalid value: []string{"v2", "v2"}: must include at least one of v1, v1beta1',
    ]);
    expect(texts(cfg(hook({ admissionReviewVersions: [] })))).toEqual([
      'webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1',
    ]);
    expect(texts(cfg(hook({ reinvocationPolicy: 'Always' })), mutating)).toEqual([
      'webhooks[0].reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"',
    ]);
  });

  test('rules as the policies have them', () => {
    expect(
      texts(cfg(hook({ rules: [{ operations: ['*', 'CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }] }))),
    ).toEqual([
      'webhooks[0].rules[0].operations: Invalid value: []admissionregistration.OperationType{"*", "CREATE"}: if \'*\' is present, must not specify other operations',
    ]);
  });
});
