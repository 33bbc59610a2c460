/**
 * The floor of bench/apf.ts parts 3 and 4, spawned by it: a bare Bun.serve over TLS that does the
 * least an in-process API Priority and Fairness can do. LISTs (paths ending in /configmaps) take
 * WIDTH of SEATS seats, wait in one FIFO queue of QUEUE requests when not enough are free and get
 * 429 with Retry-After beyond it. Seats come back as src/apf/flow-control.ts returns them: queued
 * when the answer is made, and all handed back by one setImmediate on the event loop's next turn
 * (not setTimeout(0), which Bun fires about once per millisecond and which would make N seats mean
 * N LISTs per millisecond). Each LIST answer is a fresh copy of the real server's LIST bytes (the
 * server builds one per request); GETs answer the real server's GET bytes and take no seat. No
 * authentication beyond a bearer header, no classification, no store: whatever tail the quiet user
 * sees here, the server cannot beat.
 *
 * Environment: C, K (certificate and key), LIST_FILE, GET_FILE, SEATS, QUEUE, WIDTH (seats per
 * LIST, 1 by default, at most SEATS). Prints the port.
 */
import * as fs from 'node:fs';

const seats = Number(process.env.SEATS ?? 12);
const queueLimit = Number(process.env.QUEUE ?? 300);
const width = Math.max(1, Math.min(seats, Number(process.env.WIDTH ?? 1)));
const list = new Uint8Array(fs.readFileSync(process.env.LIST_FILE as string));
const one = new Uint8Array(fs.readFileSync(process.env.GET_FILE as string));
const json = { 'content-type': 'application/json' };

let busy = 0;
const waiting: (() => void)[] = [];
let releasing = 0;
function releaseAll(): void {
  busy -= releasing;
  releasing = 0;
  while (busy + width <= seats) {
    const next = waiting.shift();
    if (!next) break;
    busy += width;
    next();
  }
}

const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  tls: { cert: process.env.C, key: process.env.K },
  async fetch(req) {
    if (!req.headers.get('authorization')) return new Response('{"kind":"Status","code":401}', { status: 401, headers: json });
    if (!req.url.endsWith('/configmaps')) return new Response(one, { headers: json });
    if (waiting.length === 0 && busy + width <= seats) busy += width;
    else if (waiting.length >= queueLimit) {
      return new Response('{"kind":"Status","code":429}', { status: 429, headers: { ...json, 'retry-after': '1' } });
    } else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return new Response(list.slice(), { headers: json });
    } finally {
      if (releasing === 0) setImmediate(releaseAll);
      releasing += width;
    }
  },
});
console.log(server.port);
