/** Objects more than one bench uses, so that their figures compare the same thing. */

/** The LimitRange of the admission benches (bench/admission.ts, bench/quota.ts): defaults, a max, a ratio. */
export const BENCH_LIMIT_RANGE_SPEC = {
  limits: [
    {
      type: 'Container',
      default: { cpu: '500m', memory: '256Mi' },
      defaultRequest: { cpu: '100m' },
      max: { cpu: '2' },
      maxLimitRequestRatio: { cpu: '10' },
    },
    { type: 'Pod', max: { memory: '4Gi' } },
  ],
};
