/** admissionregistration.svc.io/v1 webhook configurations (rules in src/kinds/validation/webhooks.ts). */
import { webhookConfigurationRules } from '../validation/webhooks';
import { AGE, col } from './cells';
import type { Spec } from './spec';

const WEBHOOKS = col('Webhooks', 'integer', 'Webhooks indicates the number of webhooks registered in this configuration', (x) =>
  Array.isArray(x.webhooks) ? x.webhooks.length : 0,
);

export const ADMISSIONREGISTRATION: Spec[] = (['Mutating', 'Validating'] as const).map(
  (m): Spec => ({
    group: 'admissionregistration.svc.io',
    kind: `${m}WebhookConfiguration`,
    plural: `${m.toLowerCase()}webhookconfigurations`,
    categories: ['api-extensions'],
    namespaced: false,
    pkg: 'admissionregistration',
    // The reference's strategy counts changes of the webhooks in metadata.generation.
    generation: true,
    rules: { validate: webhookConfigurationRules(m === 'Mutating') },
    columns: [WEBHOOKS, AGE],
  }),
);
