/**
 * Just enough of PKCS#10 (RFC 2986) to check a certificate request as the reference's
 * x509.ParseCertificateRequest and CheckSignature do: the DER structure, the subject's
 * organizations (for the CertificateSubjectRestriction admission plugin), and the signature over
 * certificationRequestInfo with the request's own public key (node:crypto).
 *
 *   CertificationRequest ::= SEQUENCE { certificationRequestInfo, signatureAlgorithm, signature BIT STRING }
 *   CertificationRequestInfo ::= SEQUENCE { version INTEGER, subject Name, subjectPKInfo SEQUENCE, attributes [0] }
 */
import { createPublicKey, verify } from 'node:crypto';

interface Tlv {
  tag: number;
  /** The whole element (header and content). */
  raw: Buffer;
  content: Buffer;
}

class DerError extends Error {}

/** The elements of `b`, in order (each must fit). */
function elements(b: Buffer): Tlv[] {
  const out: Tlv[] = [];
  let at = 0;
  while (at < b.length) {
    if (at + 2 > b.length) throw new DerError('asn1: syntax error: data truncated');
    const tag = b[at] as number;
    let len = b[at + 1] as number;
    let head = 2;
    if (len & 0x80) {
      const n = len & 0x7f;
      if (n === 0 || n > 4 || at + 2 + n > b.length) throw new DerError('asn1: syntax error: data truncated');
      len = 0;
      for (let i = 0; i < n; i++) len = len * 256 + (b[at + 2 + i] as number);
      head = 2 + n;
    }
    if (at + head + len > b.length) throw new DerError('asn1: syntax error: data truncated');
    out.push({ tag, raw: b.subarray(at, at + head + len), content: b.subarray(at + head, at + head + len) });
    at += head + len;
  }
  return out;
}

function one(b: Buffer, tag: number): Tlv {
  const all = elements(b);
  if (all.length !== 1 || all[0]?.tag !== tag)
    throw new DerError(all.length > 1 ? 'x509: trailing data' : "asn1: structure error: tags don't match");
  return all[0] as Tlv;
}

function oid(content: Buffer): string {
  const parts = [Math.floor((content[0] as number) / 40), (content[0] as number) % 40];
  let v = 0;
  for (const byte of content.subarray(1)) {
    v = v * 128 + (byte & 0x7f);
    if (!(byte & 0x80)) {
      parts.push(v);
      v = 0;
    }
  }
  return parts.join('.');
}

export interface ParsedRequest {
  organizations: string[];
  /** Why the signature does not verify, or undefined (also when its algorithm is not one checked here). */
  signatureProblem?: string;
}

const ALGORITHMS: Record<string, { hash: string | null; kind: 'ECDSA' | 'RSA' | 'Ed25519' }> = {
  '1.2.840.10045.4.3.2': { hash: 'sha256', kind: 'ECDSA' },
  '1.2.840.10045.4.3.3': { hash: 'sha384', kind: 'ECDSA' },
  '1.2.840.10045.4.3.4': { hash: 'sha512', kind: 'ECDSA' },
  '1.2.840.113549.1.1.5': { hash: 'sha1', kind: 'RSA' },
  '1.2.840.113549.1.1.11': { hash: 'sha256', kind: 'RSA' },
  '1.2.840.113549.1.1.12': { hash: 'sha384', kind: 'RSA' },
  '1.2.840.113549.1.1.13': { hash: 'sha512', kind: 'RSA' },
  '1.3.101.112': { hash: null, kind: 'Ed25519' },
};
const ORGANIZATION = '2.5.4.10';

/** Parse a DER certificate request; throws an Error with the reference's kind of message. */
export function parseCertificateRequest(der: Buffer): ParsedRequest {
  const top = one(der, 0x30);
  const [info, alg, sig] = elements(top.content);
  if (!info || !alg || !sig || info.tag !== 0x30 || alg.tag !== 0x30 || sig.tag !== 0x03) {
    throw new DerError("asn1: structure error: tags don't match");
  }
  const [version, subject, spki] = elements(info.content);
  if (!version || !subject || !spki || version.tag !== 0x02 || subject.tag !== 0x30 || spki.tag !== 0x30) {
    throw new DerError("asn1: structure error: tags don't match");
  }
  const organizations: string[] = [];
  for (const rdn of elements(subject.content)) {
    for (const atv of elements(rdn.content)) {
      const [type, value] = elements(atv.content);
      if (type?.tag === 0x06 && value && oid(type.content) === ORGANIZATION) organizations.push(value.content.toString('utf8'));
    }
  }
  const algOid = elements(alg.content)[0];
  const known = algOid?.tag === 0x06 ? ALGORITHMS[oid(algOid.content)] : undefined;
  if (!known) return { organizations };
  let ok = false;
  try {
    const key = createPublicKey({ key: spki.raw, format: 'der', type: 'spki' });
    const signature = sig.content.subarray(1);
    ok = verify(known.hash, info.raw, known.kind === 'ECDSA' ? { key, dsaEncoding: 'der' } : key, signature);
  } catch {
    ok = false;
  }
  if (ok) return { organizations };
  const signatureProblem = known.kind === 'RSA' ? 'crypto/rsa: verification error' : `x509: ${known.kind} verification failure`;
  return { organizations, signatureProblem };
}

/** The DER of the first PEM block of `pem` if it is a CERTIFICATE REQUEST, else undefined. */
export function requestDer(pem: string): Buffer | undefined {
  const m = /-----BEGIN ([^-\r\n]+)-----\r?\n([\s\S]*?)-----END \1-----/.exec(pem);
  if (m?.[1] !== 'CERTIFICATE REQUEST') return undefined;
  return Buffer.from(((m as RegExpExecArray)[2] as string).replace(/\s+/g, ''), 'base64');
}

/** ParseCSR and CheckSignature of a spec.request (base64 of PEM): the problem, or the parsed request. */
export function checkRequest(request: string): { problem: string } | { parsed: ParsedRequest } {
  const der = requestDer(Buffer.from(request, 'base64').toString('latin1'));
  if (!der) return { problem: 'PEM block type must be CERTIFICATE REQUEST' };
  try {
    const parsed = parseCertificateRequest(der);
    return parsed.signatureProblem ? { problem: parsed.signatureProblem } : { parsed };
  } catch (e) {
    if (e instanceof DerError) return { problem: e.message };
    throw e;
  }
}
