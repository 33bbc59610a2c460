/**
 * certificates.svc.io/v1 CertificateSigningRequest rules, as the reference's
 * pkg/apis/certificates/validation and pkg/registry/certificates/certificates/strategy.go: the
 * request is a PEM CERTIFICATE REQUEST whose signature verifies (csr-der.ts), signerName
 * a `domain/path`, usages from the known set, expirationSeconds ≥ 600; Approved and Denied
 * conditions exclude each other and only the approval subresource changes them; the certificate
 * only through status, once.
 */
import { X509Certificate } from 'node:crypto';
import { clone, now, type Obj } from '../../api/meta';
import type { UserInfo } from '../../api/user';
import {
  dns1123Label,
  dns1123Subdomain,
  duplicate,
  type FieldError,
  forbiddenField,
  invalidValue,
  notSupported,
  required,
} from '../../api/validation';
import type { StatusLike } from '../../registry/kind';
import { type Errs, GoValue, list, obj, semanticEqual, str } from './common';
import { checkRequest } from './csr-der';

export const USAGES = [
  'any',
  'cert sign',
  'client auth',
  'code signing',
  'content commitment',
  'crl sign',
  'data encipherment',
  'decipher only',
  'digital signature',
  'email protection',
  'encipher only',
  'ipsec end system',
  'ipsec tunnel',
  'ipsec user',
  'key agreement',
  'key encipherment',
  'microsoft sgc',
  'netscape sgc',
  'ocsp signing',
  's/mime',
  'server auth',
  'signing',
  'timestamping',
];
const LEGACY_UNKNOWN = 'kubernetes.io/legacy-unknown';
const ONLY_TRUE = new Set(['Approved', 'Denied', 'Failed']);

/** A PEM's blocks: type, headers present, and the body's bytes. */
function pemBlocks(text: string): { type: string; headers: boolean; der: Buffer }[] {
  const out: { type: string; headers: boolean; der: Buffer }[] = [];
  const re = /-----BEGIN ([^-\r\n]+)-----\r?\n([\s\S]*?)-----END \1-----/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const body = m[2] as string;
    const headers = /^[^\s:]+:/m.test(body);
    out.push({ type: m[1] as string, headers, der: Buffer.from(body.replace(/\s+/g, ''), 'base64') });
  }
  return out;
}

/** Go's %#v of a []byte (the reference prints spec.request that way). */
function goBytes(b: Buffer, json: unknown): GoValue {
  return new GoValue(`[]byte{${[...b].map((x) => `0x${x.toString(16)}`).join(', ')}}`, json);
}

function requestProblem(request: string): string | undefined {
  const r = checkRequest(request);
  return 'problem' in r ? r.problem : undefined;
}

function certificateProblem(cert: string): string | undefined {
  if (cert === '') return undefined;
  const blocks = pemBlocks(Buffer.from(cert, 'base64').toString('latin1'));
  if (blocks.length === 0) return 'must contain at least one CERTIFICATE PEM block';
  for (const b of blocks) {
    if (b.type !== 'CERTIFICATE') return `only CERTIFICATE PEM blocks are allowed, found "${b.type}"`;
    if (b.headers) return 'no PEM block headers are permitted';
    try {
      new X509Certificate(b.der);
    } catch {
      return 'x509: malformed certificate';
    }
  }
  return undefined;
}

/** ValidateSignerName: `example.com/signer-name`. */
export function validateSignerName(path: string, name: string): Errs {
  if (name === '') return [required(path)];
  const segs = name.split('/');
  if (segs.length !== 2) {
    return [invalidValue(path, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'")];
  }
  const [domain, rest] = segs as [string, string];
  const errs: Errs = [];
  if (domain.length > 253) errs.push({ type: 'FieldValueTooLong', field: path, detail: 'must have at most 253 bytes' });
  const labels = domain.split('.');
  for (const l of labels) {
    const m = dns1123Label(l);
    if (m.length > 0) {
      errs.push(...m.map((x) => invalidValue(path, domain, `validating label "${l}": ${x}`)));
      break;
    }
  }
  if (labels.length < 2) errs.push(invalidValue(path, domain, 'should be a domain with at least two segments separated by dots'));
  for (const l of rest.split('.')) {
    const m = dns1123Subdomain(l);
    if (m.length > 0) {
      errs.push(...m.map((x) => invalidValue(path, rest, `validating label "${l}": ${x}`)));
      break;
    }
  }
  if (name.length > 571) errs.push({ type: 'FieldValueTooLong', field: path, detail: 'must have at most 571 bytes' });
  return errs;
}

const conditions = (o: Obj): Record<string, unknown>[] => list<Record<string, unknown>>(obj(o.status)?.conditions);
const ofType = (o: Obj, t: string) => conditions(o).filter((c) => c.type === t);
const hasBoth = (o: Obj) => ofType(o, 'Approved').length > 0 && ofType(o, 'Denied').length > 0;

export function validateCSR(o: Obj, old?: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const spec = obj(o.spec) ?? {};
  const request = str(spec.request);
  const why = requestProblem(request);
  if (why) errs.push(invalidValue('spec.request', goBytes(Buffer.from(request, 'base64'), request), why));
  const usages = list(spec.usages);
  if (usages.length === 0) errs.push(required('spec.usages'));
  const oldUsages = old ? list(obj(old.spec)?.usages) : [];
  if (!oldUsages.some((u) => !USAGES.includes(String(u)))) {
    usages.forEach((u, i) => {
      if (!USAGES.includes(String(u))) errs.push(notSupported(`spec.usages[${i}]`, u, USAGES));
    });
  }
  if (new Set(oldUsages).size === oldUsages.length) {
    usages.forEach((u, i) => {
      if (usages.indexOf(u) < i) errs.push(duplicate(`spec.usages[${i}]`, u));
    });
  }
  const signer = str(spec.signerName);
  if (signer === LEGACY_UNKNOWN && str(obj(old?.spec)?.signerName) !== LEGACY_UNKNOWN) {
    errs.push(invalidValue('spec.signerName', signer, 'the legacy signerName is not allowed via this API version'));
  } else errs.push(...validateSignerName('spec.signerName', signer));
  if (typeof spec.expirationSeconds === 'number' && spec.expirationSeconds < 600) {
    errs.push(
      invalidValue('spec.expirationSeconds', spec.expirationSeconds, 'may not specify a duration less than 600 seconds (10 minutes)'),
    );
  }
  const allowBoth = old !== undefined && hasBoth(old);
  let approved = false;
  let denied = false;
  const seen = new Set<unknown>();
  conditions(o).forEach((c, i) => {
    const at = `status.conditions[${i}]`;
    if (!c.type) errs.push(required(`${at}.type`));
    const allowed = ONLY_TRUE.has(str(c.type)) ? ['True'] : ['False', 'True', 'Unknown'];
    if (!c.status) errs.push(required(`${at}.status`));
    else if (!allowed.includes(str(c.status))) errs.push(notSupported(`${at}.status`, c.status, allowed));
    if (!allowBoth && c.type === 'Approved') {
      approved = true;
      if (denied) errs.push(invalidValue(`${at}.type`, c.type, 'Approved and Denied conditions are mutually exclusive'));
    }
    if (!allowBoth && c.type === 'Denied') {
      denied = true;
      if (approved) errs.push(invalidValue(`${at}.type`, c.type, 'Approved and Denied conditions are mutually exclusive'));
    }
    if (seen.has(c.type)) errs.push(duplicate(`${at}.type`, c.type));
    seen.add(c.type);
  });
  const cert = str(obj(o.status)?.certificate);
  if (!old || cert !== str(obj(old.status)?.certificate)) {
    const bad = certificateProblem(cert);
    if (bad) errs.push(invalidValue('status.certificate', '<certificate data>', bad));
  }
  return errs;
}

/** ValidateCertificateSigningRequest{,Status,Approval}Update's update-only rules. */
export function validateCSRUpdate(o: Obj, old: Obj, subresource = ''): FieldError[] {
  const errs: FieldError[] = [];
  for (const t of ['Approved', 'Denied', 'Failed']) {
    if (ofType(o, t).length < ofType(old, t).length) {
      errs.push(forbiddenField('status.conditions', `updates may not remove a condition of type "${t}"`));
    }
  }
  if (subresource !== 'approval') {
    for (const t of ['Approved', 'Denied']) {
      const [now, was] = [ofType(o, t), ofType(old, t)];
      if (now.length > was.length) errs.push(forbiddenField('status.conditions', `updates may not add a condition of type "${t}"`));
      else if (now.length === was.length && !semanticEqual(now, was)) {
        errs.push(forbiddenField('status.conditions', `updates may not modify a condition of type "${t}"`));
      }
    }
  }
  const cert = str(obj(o.status)?.certificate);
  const oldCert = str(obj(old.status)?.certificate);
  if (cert !== oldCert) {
    if (subresource !== 'status') errs.push(forbiddenField('status.certificate', 'updates may not set certificate content'));
    else if (oldCert !== '') errs.push(forbiddenField('status.certificate', 'updates may not modify existing certificate content'));
  }
  return errs;
}

/** The requesting user's identity into spec (the reference's PrepareForCreate), status cleared. */
export function prepareCSRForCreate(o: Obj, user?: UserInfo): void {
  const spec = (obj(o.spec) ?? {}) as Record<string, unknown>;
  o.spec = spec;
  delete spec.username;
  delete spec.uid;
  delete spec.groups;
  delete spec.extra;
  if (user) {
    if (user.name) spec.username = user.name;
    if (user.uid) spec.uid = user.uid;
    if (user.groups.length > 0) spec.groups = [...user.groups];
    if (user.extra && Object.keys(user.extra).length > 0) spec.extra = clone(user.extra);
  }
  o.status = {};
}

/** lastUpdateTime and lastTransitionTime where a write left them out (populateConditionTimestamps). */
function stampConditions(next: Obj, cur: Obj): void {
  const t = now();
  for (const c of conditions(next)) {
    if (!c.lastUpdateTime) c.lastUpdateTime = t;
    if (!c.lastTransitionTime) {
      const was = conditions(cur).find((p) => p.type === c.type && p.status === c.status && p.lastTransitionTime);
      c.lastTransitionTime = was ? was.lastTransitionTime : t;
    }
  }
}

const withStatus = (o: Obj): Record<string, unknown> => {
  const s = (obj(o.status) ?? {}) as Record<string, unknown>;
  o.status = s;
  return s;
};

/** The CSR's status-like subresources: status keeps Approved/Denied as they were; approval changes only the conditions. */
export const CSR_SUBRESOURCES: Record<string, StatusLike> = {
  status: {
    merge(input, cur) {
      const next = clone(cur);
      next.status = clone(obj(input.status) ?? {});
      // Approved/Denied stay as stored unless the write added or removed some (validation refuses that).
      for (const t of ['Approved', 'Denied']) {
        const [want, was] = [ofType(next, t), ofType(cur, t)];
        if (want.length !== was.length) continue;
        let i = 0;
        const st = withStatus(next);
        st.conditions = conditions(next).map((c) => (c.type === t ? clone(was[i++] as Record<string, unknown>) : c));
      }
      stampConditions(next, cur);
      return next;
    },
  },
  approval: {
    merge(input, cur) {
      const next = clone(cur);
      const want = list(obj(input.status)?.conditions);
      const st = withStatus(next);
      if (want.length > 0) st.conditions = clone(want);
      else delete st.conditions;
      stampConditions(next, cur);
      return next;
    },
    ignored: ['spec'],
  },
};
