/**
 * autoscaling: HorizontalPodAutoscaler served as v2 (stored) and v1 (converted: src/kinds/conversion/hpa.ts).
 */

import { HPA_COLUMNS } from '../columns-autoscaling';
import { hpaFromV1, hpaToV1 } from '../conversion/hpa';
import { horizontalPodAutoscaler, validateHpa } from '../validation/autoscaling';
import type { Spec } from './spec';

const common = {
  group: 'autoscaling',
  kind: 'HorizontalPodAutoscaler',
  plural: 'horizontalpodautoscalers',
  shortNames: ['hpa'],
  categories: ['all'],
  namespaced: true,
  status: true,
  pkg: 'autoscaling',
  emptyStatus: true,
} as const;

export const AUTOSCALING: Spec[] = [
  { ...common, version: 'v2', shortNames: ['hpa'], categories: ['all'], rules: horizontalPodAutoscaler, columns: HPA_COLUMNS },
  {
    ...common,
    version: 'v1',
    shortNames: ['hpa'],
    categories: ['all'],
    // Validated as the stored form, as the reference validates the internal one.
    rules: { validate: (o) => validateHpa(hpaFromV1(o)) },
    columns: HPA_COLUMNS.map((c) => ({ ...c, cell: (x, now) => c.cell(x.apiVersion === 'autoscaling/v1' ? hpaFromV1(x) : x, now) })),
    storedAs: { group: 'autoscaling', plural: 'horizontalpodautoscalers', read: hpaToV1, write: hpaFromV1 },
  },
];
