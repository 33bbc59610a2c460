/**
 * The protobuf envelope (see ./protobuf): its 4-byte prefix, the media types that carry it, and the
 * reading of its `runtime.Unknown` wrapper (`typeMeta = 1`, `raw = 2`, `contentEncoding = 3`,
 * `contentType = 4`) down to the object's raw message.
 */
import { Reader } from '../wire/protobuf';

/** The 4-byte prefix of every envelope. */
export const PROTOBUF_PREFIX: Readonly<Uint8Array> = new Uint8Array([0x6b, 0x38, 0x73, 0x00]);
/** The media type of this project's protobuf encoding. */
export const PROTOBUF_MEDIA_TYPE = 'application/vnd.svc.protobuf';
/** The media type unmodified upstream clients send and accept (same encoding). */
export const PROTOBUF_MEDIA_TYPE_UPSTREAM = 'application/vnd.kubernetes.protobuf';
/** What follows a list's items in its envelope (see ProtobufCodec.listHead): contentEncoding and contentType, empty. */
export const PROTOBUF_LIST_TAIL: Readonly<Uint8Array> = new Uint8Array([0x1a, 0x00, 0x22, 0x00]);

export interface TypeMeta {
  apiVersion: string;
  kind: string;
}

/** The envelope's type and a reader positioned on its raw message. */
export function readEnvelope(bytes: Uint8Array): { typeMeta: TypeMeta; r: Reader } {
  if (bytes.length < 4 || bytes[0] !== 0x6b || bytes[1] !== 0x38 || bytes[2] !== 0x73 || bytes[3] !== 0x00) {
    const got = Array.from(bytes.subarray(0, 4), (b) => b.toString(16).padStart(2, '0')).join(' ');
    throw new Error(`protobuf: the body does not start with the envelope prefix 6b 38 73 00 (got ${got || 'nothing'})`);
  }
  const r = new Reader(bytes, 4, bytes.length);
  const typeMeta: TypeMeta = { apiVersion: '', kind: '' };
  let rawStart = 0;
  let rawEnd = 0;
  let contentEncoding = '';
  let contentType = '';
  while (r.pos < r.end) {
    const k = r.uvarint32();
    switch (k) {
      case 0x0a: {
        const n = r.len();
        const end = r.end;
        r.end = r.pos + n;
        while (r.pos < r.end) {
          const k2 = r.uvarint32();
          if (k2 === 0x0a) typeMeta.apiVersion = r.string();
          else if (k2 === 0x12) typeMeta.kind = r.string();
          else r.skip(k2 & 7, k2 >>> 3);
        }
        if (r.pos !== r.end) throw r.truncated();
        r.end = end;
        break;
      }
      case 0x12: {
        const n = r.len();
        rawStart = r.pos;
        rawEnd = r.pos + n;
        r.pos = rawEnd;
        break;
      }
      case 0x1a:
        contentEncoding = r.string();
        break;
      case 0x22:
        contentType = r.string();
        break;
      default:
        r.skip(k & 7, k >>> 3);
    }
  }
  if (contentEncoding !== '') throw new Error(`protobuf: unsupported content encoding ${JSON.stringify(contentEncoding)}`);
  if (contentType !== '' && contentType !== PROTOBUF_MEDIA_TYPE && contentType !== PROTOBUF_MEDIA_TYPE_UPSTREAM) {
    throw new Error(`protobuf: unsupported content type ${JSON.stringify(contentType)} in the envelope`);
  }
  r.pos = rawStart;
  r.end = rawEnd;
  return { typeMeta, r };
}
