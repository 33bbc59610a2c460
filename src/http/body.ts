/**
 * Request bodies: size limit (413) and decoding with the negotiated codec (400 on malformed
 * input; the media type's 415 is the negotiation's).
 */
import { tooLarge } from '../api/status';
import type { DefName } from '../schema/types';
import type { BodyType, NegotiatedBody } from './negotiate';

/** The reference's limit on request bodies (3 MiB). */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

const utf8 = new TextDecoder();

export async function readBody(req: Request, limit = MAX_BODY_BYTES): Promise<string> {
  return utf8.decode(await readBodyBytes(req, limit));
}

export async function readBodyBytes(req: Request, limit = MAX_BODY_BYTES): Promise<Uint8Array> {
  const declared = Number(req.headers.get('content-length') ?? '0');
  if (declared > limit) {
    // Discard the unread body: a request whose body is never consumed stays in flight and would
    // hold up a graceful shutdown.
    await req.body?.cancel().catch(() => {});
    const e = tooLarge(limit);
    e.headers = { Connection: 'close' };
    throw e;
  }
  const buf = await req.arrayBuffer();
  if (buf.byteLength > limit) throw tooLarge(limit);
  return new Uint8Array(buf);
}

/**
 * Read and decode a request body with its negotiated codec (src/http/negotiate.ts); `def` is
 * the kind's definition (protobuf and CBOR read by it). Duplicate fields are collected; a text
 * body's `text` comes along (error messages quote it).
 */
export async function decodeBody(
  req: Request,
  body: NegotiatedBody,
  def?: DefName,
): Promise<{ type: BodyType; value: unknown; duplicates: string[]; text?: string }> {
  const { type, codec } = body;
  const duplicates: string[] = [];
  if (!codec.binary) {
    // A declared length within the limit is the body's length (the HTTP layer holds it to it):
    // read it as text in one native step. Without one (chunked), count the bytes first.
    const declared = req.headers.get('content-length');
    if (declared !== null && Number(declared) <= MAX_BODY_BYTES) {
      const text = await req.text();
      return { type, value: codec.decode(text, def, duplicates), duplicates, text };
    }
  }
  const bytes = await readBodyBytes(req);
  if (codec.binary) return { type, value: codec.decode(bytes, def, duplicates), duplicates };
  const text = utf8.decode(bytes);
  return { type, value: codec.decode(text, def, duplicates), duplicates, text };
}
