import type { Overview } from '../api';
import { LiveChart } from '../chart';
import { fill, fmt, h, table } from '../dom';
import { observeApi } from '../query';
import { card, type Page, status } from './common';

export const overviewPage: Page = (root) => {
  const line = h('div', { class: 'status' });
  const cards = h('div', { class: 'cards' });
  const charts = h('div', { class: 'charts' });
  const kinds = h('div');
  fill(root, h('h2', {}, 'Overview'), line, cards, charts, h('h3', {}, 'Objects per kind'), kinds);
  const cpuEl = h('div', { class: 'chart' });
  const rssEl = h('div', { class: 'chart' });
  charts.append(cpuEl, rssEl);
  const cpu = new LiveChart(cpuEl, 'CPU (% of one core)', ['cpu'], 300, '%');
  const rss = new LiveChart(rssEl, 'Resident memory (MiB)', ['rss']);
  let prev: Overview | undefined;
  let cpuPct = Number.NaN;
  const off = observeApi<Overview>('overview', (r) => {
    if (!status(line, r)) return;
    const o = r.data;
    if (prev && o.now > prev.now) {
      const used = o.process.cpuUserMicros + o.process.cpuSystemMicros - prev.process.cpuUserMicros - prev.process.cpuSystemMicros;
      cpuPct = (used / 1000 / (o.now - prev.now)) * 100;
      cpu.push(o.now, [cpuPct]);
    }
    if (prev?.now !== o.now) rss.push(o.now, [o.process.rssBytes / 2 ** 20]);
    prev = o;
    fill(
      cards,
      card('Version', o.version.gitVersion, 'version'),
      card('Uptime', fmt.duration(o.uptimeSeconds), 'uptime'),
      card('Store', o.store.backend, 'backend'),
      card('Revision', fmt.int(o.store.revision), 'revision'),
      card('Compacted to', fmt.int(o.store.compactedRevision), 'compacted'),
      card('Keys', fmt.int(o.store.keys), 'keys'),
      card('WAL fsyncs', fmt.int(o.store.walFsyncs), 'fsyncs'),
      card('Records per fsync', fmt.num(o.store.recordsPerFsync, 2), 'records-per-fsync'),
      card('Snapshots', o.store.snapshots ?? '–', 'snapshots'),
      card('Compactions', o.store.compactions ?? '–', 'compactions'),
      card('RSS', fmt.bytes(o.process.rssBytes), 'rss'),
      card('CPU', Number.isFinite(cpuPct) ? `${cpuPct.toFixed(1)} %` : '–', 'cpu'),
    );
    const rows = [...o.kinds].sort((a, b) => (b.objects ?? -1) - (a.objects ?? -1) || (a.resource < b.resource ? -1 : 1));
    fill(
      kinds,
      table(['Resource', 'Kind', 'Objects'], rows, (k) => [k.resource, k.kind, k.objects === null ? 'not cached' : fmt.int(k.objects)], {
        id: 'kinds',
      }),
    );
  });
  return () => {
    off();
    cpu.destroy();
    rss.destroy();
  };
};
