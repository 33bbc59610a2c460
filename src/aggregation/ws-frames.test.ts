import { expect, test } from 'bun:test';
import { closePayload, encodeFrame, FrameReader, type Message, OP_BINARY, OP_CLOSE, OP_PING, OP_TEXT } from './ws-frames';

/** A frame as a server writes it: unmasked, FIN as given. */
function serverFrame(opcode: number, payload: Uint8Array, fin = true): Uint8Array {
  const n = payload.byteLength;
  const head =
    n < 126
      ? [n]
      : n < 65536
        ? [126, n >>> 8, n & 0xff]
        : [127, 0, 0, 0, 0, (n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
  return new Uint8Array([(fin ? 0x80 : 0) | opcode, ...head, ...payload]);
}

test('frames of each length form are read back, in pieces of any size, fragments joined', () => {
  const cases = [3, 125, 126, 65535, 65536, 200_000].map((n) => new Uint8Array(n).map((_, i) => (i * 7) & 0xff));
  for (const piece of [1, 7, 4096, 1 << 20]) {
    const stream = [
      ...cases.map((p) => serverFrame(OP_BINARY, p)),
      serverFrame(OP_TEXT, new TextEncoder().encode('he'), false),
      serverFrame(OP_PING, new Uint8Array([1])),
      serverFrame(0, new TextEncoder().encode('llo')),
      serverFrame(OP_CLOSE, closePayload(1000, 'bye')),
    ];
    const all = new Uint8Array(stream.reduce((s, f) => s + f.byteLength, 0));
    let o = 0;
    for (const f of stream) {
      all.set(f, o);
      o += f.byteLength;
    }
    const r = new FrameReader();
    const got: Message[] = [];
    for (let i = 0; i < all.byteLength; i += piece) got.push(...r.push(all.slice(i, i + piece)));
    expect(got.map((m) => m.opcode)).toEqual([...cases.map(() => OP_BINARY), OP_PING, OP_TEXT, OP_CLOSE]);
    for (const [i, p] of cases.entries()) expect(got[i]?.payload).toEqual(p);
    expect(new TextDecoder().decode(got[cases.length + 1]?.payload)).toBe('hello');
  }
});

test('a masked frame (as the client writes it) is unmasked when read', () => {
  const payload = new Uint8Array(70_000).map((_, i) => i & 0xff);
  const f = encodeFrame(OP_BINARY, payload);
  expect((f[1] as number) & 0x80).toBe(0x80);
  const [m] = new FrameReader().push(f);
  expect(m?.payload).toEqual(payload);
});
