/** The request metrics count each request in its own series and code, whatever the order of requests. */
import { expect, test } from 'bun:test';
import { Metrics, type RequestLabels } from './metrics';

const labels = (resource: string, code: string, verb = 'POST'): RequestLabels => ({
  verb,
  dryRun: '',
  group: '',
  version: 'v1',
  resource,
  subresource: '',
  scope: 'resource',
  component: 'apiserver',
  code,
});

test('runs of one series and alternations between series and codes are each counted where they belong', () => {
  const m = new Metrics(() => ({ revision: 1, compacted: 0, keys: 0, walFsyncs: 0, walRecords: 0 }));
  const seq: [string, string, string?][] = [
    ['configmaps', '201'],
    ['configmaps', '201'],
    ['configmaps', '409'],
    ['configmaps', '201'],
    ['pods', '201'],
    ['configmaps', '201'],
    ['configmaps', '201', 'GET'],
    ['configmaps', '201'],
  ];
  for (const [resource, code, verb] of seq) m.observe(labels(resource, code, verb), 0.001);
  const byKey = new Map(m.requestSeries().series.map((s) => [`${s.verb} ${s.resource}`, s]));
  expect(byKey.get('POST configmaps')?.codes).toEqual({ '201': 5, '409': 1 });
  expect(byKey.get('POST configmaps')?.count).toBe(6);
  expect(byKey.get('POST pods')?.codes).toEqual({ '201': 1 });
  expect(byKey.get('GET configmaps')?.codes).toEqual({ '201': 1 });
  expect(m.text()).toContain('apiserver_request_total{code="409",');
});
