/**
 * Request bodies: size limit (413), media type (415) and decoding (400 on malformed input).
 */
import YAML from 'yaml';
import { badRequest, tooLarge } from '../api/status';
import { CborError } from '../codec/cbor';
import { findDuplicateKeys } from '../codec/json-dups';
import { type BodyType, bodyType } from './negotiate';

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

export function decodeText(text: string, type: BodyType, duplicates?: string[]): unknown {
  if (type === 'yaml' || type === 'apply-patch') {
    // YAML is a superset of JSON; JSON bodies go through the faster parser.
    const t = text.trimStart();
    if (t.startsWith('{') || t.startsWith('[')) return decodeText(text, 'json', duplicates);
    try {
      const docs = YAML.parseAllDocuments(text, { uniqueKeys: false });
      if (docs.length === 0) return null;
      const d = docs[0];
      if (!d || d.errors.length > 0) throw new Error(d?.errors[0]?.message ?? 'invalid YAML');
      if (docs.length > 1) throw new Error('expected a single YAML document');
      if (duplicates) {
        for (const e of YAML.parseDocument(text).errors) {
          if (e.code === 'DUPLICATE_KEY') duplicates.push(`line ${e.linePos?.[0]?.line ?? '?'}: ${e.message.split('\n')[0]}`);
        }
      }
      return d.toJSON();
    } catch (e) {
      throw badRequest(`error converting YAML to JSON: ${(e as Error).message}`);
    }
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
    // The scan also refuses nesting deeper than the reference's decoder takes (every later
    // pass over the object recurses).
    const dups = findDuplicateKeys(text);
    if (duplicates) duplicates.push(...dups);
  } catch (e) {
    throw badRequest(`couldn't get version/kind; json parse error: ${(e as Error).message}`);
  }
  return v;
}

/**
 * Read and decode a request body whose media type must be one of `allowed`; duplicate fields
 * are collected. Protobuf bodies need `protobuf`, the kind's decoder.
 */
export async function decodeBody(
  req: Request,
  allowed: readonly BodyType[],
  protobuf?: (bytes: Uint8Array) => unknown,
  cbor?: (bytes: Uint8Array) => unknown,
): Promise<{ type: BodyType; value: unknown; duplicates: string[] }> {
  const served = allowed.filter((t) => (t !== 'protobuf' || protobuf) && ((t !== 'cbor' && t !== 'apply-patch-cbor') || cbor));
  const type = bodyType(req.headers.get('content-type'), served);
  const duplicates: string[] = [];
  if (type === 'cbor' || type === 'apply-patch-cbor') {
    const bytes = await readBodyBytes(req);
    try {
      return { type, value: (cbor as (b: Uint8Array) => unknown)(bytes), duplicates };
    } catch (e) {
      if (e instanceof CborError) throw badRequest(`the body of the request could not be decoded: ${e.message}`);
      throw e;
    }
  }
  if (type !== 'protobuf') {
    // A declared length within the limit is the body's length (the HTTP layer holds it to it):
    // read it as text in one native step. Without one (chunked), count the bytes first.
    const declared = req.headers.get('content-length');
    if (declared !== null && Number(declared) <= MAX_BODY_BYTES) {
      return { type, value: decodeText(await req.text(), type, duplicates), duplicates };
    }
  }
  const bytes = await readBodyBytes(req);
  if (type === 'protobuf') {
    try {
      return { type, value: (protobuf as (b: Uint8Array) => unknown)(bytes), duplicates };
    } catch (e) {
      throw badRequest(`the body of the request could not be decoded: ${(e as Error).message}`);
    }
  }
  return { type, value: decodeText(utf8.decode(bytes), type, duplicates), duplicates };
}
