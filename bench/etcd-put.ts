/**
 * A lean etcd put client for the benches' baselines: one node:http2 session, a bare gRPC unary
 * call to /etcdserverpb.KV/Put per put with the PutRequest encoded by hand (key = 1, value = 2),
 * the answer only checked for grpc-status (~20 us of client CPU per put, against ~60 us through
 * the `etcd3` client; see bench/etcd-client.ts).
 */
import * as http2 from 'node:http2';

function varint(n: number): number[] {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return out;
}

/** A gRPC message frame (uncompressed, 4-byte big-endian length) of a PutRequest. */
export function putFrame(key: Buffer, val: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from([0x0a, ...varint(key.length)]), key, Buffer.from([0x12, ...varint(val.length)]), val]);
  const frame = Buffer.alloc(5 + body.length);
  frame.writeUInt32BE(body.length, 1);
  body.copy(frame, 5);
  return frame;
}

export interface LeanPutClient {
  put(key: string, value: Buffer): Promise<void>;
  close(): void;
}

/** `ca`: the authority of an https endpoint's certificate. */
export function leanPutClient(endpoint: string, ca?: string): LeanPutClient {
  const session = http2.connect(endpoint, ca === undefined ? {} : { ca });
  return {
    put: (key, value) =>
      new Promise<void>((resolve, reject) => {
        const s = session.request({
          ':method': 'POST',
          ':path': '/etcdserverpb.KV/Put',
          'content-type': 'application/grpc',
          te: 'trailers',
        });
        s.on('data', () => {});
        s.on('trailers', (t) => {
          if (t['grpc-status'] !== '0') reject(new Error(`grpc-status ${t['grpc-status']}: ${t['grpc-message']}`));
        });
        s.on('end', () => resolve());
        s.on('error', reject);
        s.end(putFrame(Buffer.from(key), value));
      }),
    close: () => session.close(),
  };
}
