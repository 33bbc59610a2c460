/**
 * The floor of bench/apf.ts part 3, spawned by it: a bare Bun.serve over TLS that does the least
 * an in-process API Priority and Fairness can do. LISTs (paths ending in /configmaps) hold one of
 * SEATS seats, wait in one FIFO queue of QUEUE requests when none is free and get 429 with
 * Retry-After beyond it; a seat is returned on the event loop's next turn, as src/apf does. Each
 * LIST answer is a fresh copy of the real server's LIST bytes (the server builds one per request);
 * GETs answer the real server's GET bytes. No authentication beyond a bearer header, no
 * classification, no store: whatever tail the quiet user sees here, the server cannot beat.
 *
 * Environment: C, K (certificate and key), LIST_FILE, GET_FILE, SEATS, QUEUE. Prints the port.
 */
import * as fs from 'node:fs';

const seats = Number(process.env.SEATS ?? 12);
const queueLimit = Number(process.env.QUEUE ?? 300);
const list = new Uint8Array(fs.readFileSync(process.env.LIST_FILE as string));
const one = new Uint8Array(fs.readFileSync(process.env.GET_FILE as string));
const json = { 'content-type': 'application/json' };

let busy = 0;
const waiting: (() => void)[] = [];
function release(): void {
  const next = waiting.shift();
  if (next) next();
  else busy--;
}

const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  tls: { cert: process.env.C, key: process.env.K },
  async fetch(req) {
    if (!req.headers.get('authorization')) return new Response('{"kind":"Status","code":401}', { status: 401, headers: json });
    if (!req.url.endsWith('/configmaps')) return new Response(one, { headers: json });
    if (busy < seats) busy++;
    else if (waiting.length >= queueLimit) {
      return new Response('{"kind":"Status","code":429}', { status: 429, headers: { ...json, 'retry-after': '1' } });
    } else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return new Response(list.slice(), { headers: json });
    } finally {
      setTimeout(release, 0);
    }
  },
});
console.log(server.port);
