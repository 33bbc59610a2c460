/**
 * WebSocket frames (RFC 6455 section 5) as the upgrade proxy needs them on its backend side,
 * where it speaks the protocol over a raw TLS socket as a client: frames it writes are masked,
 * frames it reads are not (a masked one is unmasked all the same). Fragmented messages are
 * reassembled, so each message is delivered whole.
 *
 *   byte 0   FIN (0x80) | opcode (0x0f): 0 continuation, 1 text, 2 binary, 8 close, 9 ping, 10 pong
 *   byte 1   MASK (0x80) | length 0-125, or 126 (2 more bytes) or 127 (8 more bytes)
 *   [4 bytes of mask]  payload
 */

export const OP_TEXT = 1;
export const OP_BINARY = 2;
export const OP_CLOSE = 8;
export const OP_PING = 9;
export const OP_PONG = 10;

/** One frame as the client writes it: FIN set, masked with a random key. */
export function encodeFrame(opcode: number, payload: Uint8Array): Uint8Array {
  const n = payload.byteLength;
  const head = n < 126 ? 2 : n < 65536 ? 4 : 10;
  const out = new Uint8Array(head + 4 + n);
  out[0] = 0x80 | opcode;
  if (n < 126) out[1] = 0x80 | n;
  else if (n < 65536) {
    out[1] = 0x80 | 126;
    out[2] = n >>> 8;
    out[3] = n & 0xff;
  } else {
    out[1] = 0x80 | 127;
    new DataView(out.buffer).setBigUint64(2, BigInt(n));
  }
  const mask = crypto.getRandomValues(new Uint8Array(4));
  out.set(mask, head);
  for (let i = 0; i < n; i++) out[head + 4 + i] = (payload[i] as number) ^ (mask[i & 3] as number);
  return out;
}

/** A close frame's payload: the code (2 bytes) and the reason. */
export function closePayload(code: number | undefined, reason: string | undefined): Uint8Array {
  if (code === undefined) return new Uint8Array(0);
  const r = new TextEncoder().encode(reason ?? '');
  const out = new Uint8Array(2 + r.byteLength);
  out[0] = code >>> 8;
  out[1] = code & 0xff;
  out.set(r, 2);
  return out;
}

export interface Message {
  opcode: number;
  payload: Uint8Array;
}

/**
 * Reads frames from a byte stream fed in pieces; answers the messages complete so far. The pieces
 * are kept as they come and joined once a whole frame is there (linear in the bytes read).
 */
export class FrameReader {
  private chunks: Uint8Array[] = [];
  private size = 0;
  /** The fragments of a message not finished yet, and its opcode. */
  private fragments: Uint8Array[] = [];
  private fragmentOp = 0;

  push(chunk: Uint8Array): Message[] {
    this.chunks.push(chunk);
    this.size += chunk.byteLength;
    const out: Message[] = [];
    for (;;) {
      const head = this.header();
      if (!head || this.size < head.at + head.len) break;
      const b = this.take(head.at + head.len);
      const payload = b.slice(head.at, head.at + head.len);
      if (head.masked) for (let i = 0; i < head.len; i++) payload[i] = (payload[i] as number) ^ (b[head.at - 4 + (i & 3)] as number);
      const m = this.message(head.fin, head.opcode, payload);
      if (m) out.push(m);
    }
    return out;
  }

  /** The next frame's header, once all of it arrived. */
  private header(): { fin: boolean; opcode: number; masked: boolean; len: number; at: number } | undefined {
    const b = this.peek(14);
    if (b.byteLength < 2) return undefined;
    const fin = ((b[0] as number) & 0x80) !== 0;
    const opcode = (b[0] as number) & 0x0f;
    const masked = ((b[1] as number) & 0x80) !== 0;
    let len = (b[1] as number) & 0x7f;
    let at = 2;
    if (len === 126) {
      if (b.byteLength < 4) return undefined;
      len = ((b[2] as number) << 8) | (b[3] as number);
      at = 4;
    } else if (len === 127) {
      if (b.byteLength < 10) return undefined;
      len = Number(new DataView(b.buffer, b.byteOffset + 2, 8).getBigUint64(0));
      at = 10;
    }
    if (masked) at += 4;
    return { fin, opcode, masked, len, at };
  }

  /** Up to the first n bytes, not consumed. */
  private peek(n: number): Uint8Array {
    const first = this.chunks[0];
    if (!first) return new Uint8Array(0);
    if (first.byteLength >= n || this.chunks.length === 1) return first.subarray(0, n);
    const out = new Uint8Array(Math.min(n, this.size));
    let o = 0;
    for (const c of this.chunks) {
      if (o >= out.byteLength) break;
      const part = c.subarray(0, out.byteLength - o);
      out.set(part, o);
      o += part.byteLength;
    }
    return out;
  }

  /** The first n bytes (n <= size), consumed. */
  private take(n: number): Uint8Array {
    const first = this.chunks[0] as Uint8Array;
    let out: Uint8Array;
    if (first.byteLength >= n) {
      out = first.subarray(0, n);
      if (first.byteLength === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
    } else {
      out = new Uint8Array(n);
      let o = 0;
      while (o < n) {
        const c = this.chunks[0] as Uint8Array;
        const part = c.subarray(0, n - o);
        out.set(part, o);
        o += part.byteLength;
        if (part.byteLength === c.byteLength) this.chunks.shift();
        else this.chunks[0] = c.subarray(part.byteLength);
      }
    }
    this.size -= n;
    return out;
  }

  /** A control frame at once; a data frame's message once its last fragment came. */
  private message(fin: boolean, opcode: number, payload: Uint8Array): Message | undefined {
    if (opcode >= 8) return { opcode, payload };
    if (opcode !== 0) this.fragmentOp = opcode;
    this.fragments.push(payload);
    if (!fin) return undefined;
    const parts = this.fragments;
    this.fragments = [];
    if (parts.length === 1) return { opcode: this.fragmentOp, payload: parts[0] as Uint8Array };
    const whole = new Uint8Array(parts.reduce((s, f) => s + f.byteLength, 0));
    let o = 0;
    for (const f of parts) {
      whole.set(f, o);
      o += f.byteLength;
    }
    return { opcode: this.fragmentOp, payload: whole };
  }
}
