import { expect, test } from 'bun:test';
import { evictionDelay, type Taint, type Toleration } from './taint-eviction';

const unreachable: Taint = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' };
const custom: Taint = { key: 'dedicated', value: 'gpu', effect: 'NoExecute' };

test.each([
  ['no taints: never', [], [unreachable].slice(0, 0), -1],
  ['not tolerated: at once', [], [unreachable], 0],
  [
    'tolerated for 300 s',
    [{ key: unreachable.key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
    [unreachable],
    300_000,
  ],
  ['tolerated forever', [{ key: unreachable.key, operator: 'Exists', effect: 'NoExecute' }], [unreachable], -1],
  ['tolerates everything', [{ operator: 'Exists' }], [unreachable, custom], -1],
  ['one taint of two untolerated: at once', [{ key: unreachable.key, operator: 'Exists' }], [unreachable, custom], 0],
  [
    'the least seconds of the matching tolerations',
    [
      { key: 'dedicated', operator: 'Equal', value: 'gpu', tolerationSeconds: 60 },
      { key: unreachable.key, operator: 'Exists', tolerationSeconds: 30 },
    ],
    [unreachable, custom],
    30_000,
  ],
  ['a wrong value does not tolerate', [{ key: 'dedicated', operator: 'Equal', value: 'cpu' }], [custom], 0],
  ['zero seconds: at once', [{ key: unreachable.key, operator: 'Exists', tolerationSeconds: 0 }], [unreachable], 0],
] as [string, Toleration[], Taint[], number][])('%s', (_what, tolerations, taints, want) => {
  expect(evictionDelay(tolerations, taints)).toBe(want);
});
