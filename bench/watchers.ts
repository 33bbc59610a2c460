/**
 * Watch clients for bench/watch.ts, run as their own process: opens `count` watches on one
 * resource and records, per event, the receipt time by resourceVersion. `stalled` watches are
 * opened and never read. On SIGTERM (or after `durationMs`) prints one JSON line:
 * { received, lines, duplicates, perRv: { rv: [firstMs, lastMs, count] } }.
 *
 * The watches are raw TLS sockets (Bun.connect) speaking HTTP/1.1 with a small chunked decoder,
 * not fetch: 1,000 streams at 200 events/s each are 200k reads/s, and this client shares the
 * machine's 2 cores with the server it measures, so its per-read cost (a promise and a stream
 * read per chunk with fetch) would otherwise show up as server latency.
 */
interface Spec {
  /** The watch URL; `{{i}}` in it is the watch's number (0 .. count-1), e.g. one node's pods each. */
  url: string;
  token: string;
  ca: string;
  count: number;
  stalled: number;
  durationMs: number;
  /** Watchers that parse events and record receipt times; the others only count lines (cheap). */
  sample?: number;
}

const spec = JSON.parse(process.argv[2] as string) as Spec;
const url = new URL(spec.url);
const clock = () => performance.timeOrigin + performance.now();
const perRv = new Map<number, [number, number, number]>();
let received = 0;
let duplicates = 0;
let opened = 0;
let lines = 0;
const RV = /"resourceVersion":"(\d+)"/;
const request = (i: number) =>
  `GET ${url.pathname}${url.search.replaceAll(encodeURIComponent('{{i}}'), String(i)).replaceAll('{{i}}', String(i))} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${spec.token}\r\nAccept: application/json\r\n\r\n`;

/** Event lines of one watch: the decoded chunked body, split at newlines. */
class Stream {
  private head = '';
  private inBody = false;
  /** Bytes left in the current chunk; -1 while reading a chunk-size line. */
  private left = -1;
  private sizeLine = '';
  private text = '';
  private last = 0;
  private prev = 13;

  constructor(private readonly parse: boolean) {}

  data(b: Buffer): void {
    let i = 0;
    if (!this.inBody) {
      this.head += b.toString('latin1');
      const end = this.head.indexOf('\r\n\r\n');
      if (end < 0) return;
      if (!this.head.startsWith('HTTP/1.1 200')) throw new Error(`watch: ${this.head.slice(0, 200)}`);
      this.inBody = true;
      opened++;
      i = b.length - (this.head.length - end - 4);
    }
    if (!this.parse) {
      // Event lines end with "}\n"; the chunked framing's newlines follow "\r". Count the others.
      for (let j = b.indexOf(10, i); j >= 0; j = b.indexOf(10, j + 1)) {
        const before = j > i ? (b[j - 1] as number) : this.prev;
        if (before !== 13) lines++;
      }
      if (b.length > i) this.prev = b[b.length - 1] as number;
      return;
    }
    while (i < b.length) {
      if (this.left < 0) {
        const nl = b.indexOf(10, i);
        if (nl < 0) {
          this.sizeLine += b.toString('latin1', i);
          return;
        }
        this.sizeLine += b.toString('latin1', i, nl);
        i = nl + 1;
        const size = Number.parseInt(this.sizeLine.trim(), 16);
        this.sizeLine = '';
        if (Number.isNaN(size)) continue; // the CRLF after a chunk's data
        this.left = size;
        if (size === 0) return;
        continue;
      }
      const n = Math.min(this.left, b.length - i);
      this.text += b.toString('utf8', i, i + n);
      i += n;
      this.left -= n;
      if (this.left === 0) this.left = -1;
    }
    this.lines();
  }

  private lines(): void {
    let nl = this.text.indexOf('\n');
    if (nl < 0) return;
    const t = clock();
    let start = 0;
    while (nl >= 0) {
      // The stream may open with whitespace (sent to flush the response head early).
      const line = this.text.slice(start, nl).trimStart();
      start = nl + 1;
      nl = this.text.indexOf('\n', start);
      if (!line.startsWith('{"type":"MODIFIED"') && !line.startsWith('{"type":"ADDED"')) continue;
      const m = RV.exec(line);
      if (!m) continue;
      const rv = Number(m[1]);
      if (rv <= this.last) duplicates++;
      this.last = rv;
      received++;
      const e = perRv.get(rv);
      if (e) {
        e[1] = t;
        e[2]++;
      } else perRv.set(rv, [t, t, 1]);
    }
    this.text = this.text.slice(start);
  }
}

/** Held without reading (fetch leaves the body unread): the server must cut it off, not buffer forever. */
async function stalled(): Promise<void> {
  await fetch(spec.url, { headers: { authorization: `Bearer ${spec.token}` }, tls: { ca: spec.ca } } as RequestInit);
  opened++;
  await new Promise(() => {});
}

async function watch(parse: boolean, i: number): Promise<void> {
  const s = new Stream(parse);
  await Bun.connect({
    hostname: url.hostname,
    port: Number(url.port),
    tls: { ca: spec.ca, serverName: url.hostname },
    socket: {
      open(sock) {
        sock.write(request(i));
      },
      data(_sock, b) {
        s.data(b);
      },
      error(_sock, e) {
        console.error(`watch socket: ${String(e)}`);
      },
    },
  });
}

const sample = spec.sample ?? spec.count;
const step = Math.max(1, Math.floor(spec.count / sample));
for (let i = 0; i < spec.count; i++) void watch(i % step === 0, i);
for (let i = 0; i < spec.stalled; i++) void stalled();
const started = clock();
const ready = setInterval(() => {
  if (opened >= spec.count + spec.stalled) {
    console.log(JSON.stringify({ ready: true, ms: Math.round(clock() - started) }));
    clearInterval(ready);
  }
}, 50);

const finish = () => {
  console.log(JSON.stringify({ received, duplicates, lines, perRv: Object.fromEntries(perRv) }));
  process.exit(0);
};
process.on('SIGTERM', finish);
setTimeout(finish, spec.durationMs);

export {};
