/**
 * Serving certificates. Without --tls-cert-file/--tls-private-key-file the first start creates a
 * CA and a serving certificate (ECDSA P-256) for 127.0.0.1, ::1, localhost and the bind address,
 * kept in the data dir and reused on later starts.
 */
import 'reflect-metadata'; // required by @peculiar/x509's dependency injection
import * as fs from 'node:fs';
import { isIP } from 'node:net';
import * as path from 'node:path';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(crypto);

export interface ServingCerts {
  cert: string;
  key: string;
  /** The CA that signed the serving certificate (for kubeconfigs), when generated here. */
  ca?: string;
}

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 24 * 3600 * 1000;

async function exportKey(k: CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await crypto.subtle.exportKey('pkcs8', k), 'PRIVATE KEY');
}

function serial(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(16)))
    .toString('hex')
    .replace(/^[89a-f]/, '1');
}

export async function generateCertificates(hosts: string[]): Promise<{ ca: string; cert: string; key: string }> {
  const caKeys = await crypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
  const notBefore = new Date(Date.now() - 3600_000);
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: 'CN=svc-apiserver-ca',
    notBefore,
    notAfter: new Date(Date.now() + 3650 * DAY),
    signingAlgorithm: ALG,
    keys: caKeys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const keys = await crypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
  const names = [...new Set(hosts)].map((h) => (isIP(h) ? { type: 'ip' as const, value: h } : { type: 'dns' as const, value: h }));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: 'CN=svc-apiserver',
    issuer: ca.subject,
    notBefore,
    notAfter: new Date(Date.now() + 825 * DAY),
    signingAlgorithm: ALG,
    publicKey: keys.publicKey,
    signingKey: caKeys.privateKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(names),
      await x509.AuthorityKeyIdentifierExtension.create(ca),
    ],
  });
  return { ca: ca.toString('pem'), cert: cert.toString('pem'), key: await exportKey(keys.privateKey) };
}

/** Load the configured certificate, or load/create the generated one in `dir`. */
export async function servingCerts(dir: string, bindAddress: string, certFile?: string, keyFile?: string): Promise<ServingCerts> {
  if (certFile || keyFile) {
    if (!certFile || !keyFile) throw new Error('--tls-cert-file and --tls-private-key-file go together');
    return { cert: fs.readFileSync(certFile, 'utf8'), key: fs.readFileSync(keyFile, 'utf8') };
  }
  const p = { ca: path.join(dir, 'ca.crt'), cert: path.join(dir, 'apiserver.crt'), key: path.join(dir, 'apiserver.key') };
  const hosts = [
    '127.0.0.1',
    '::1',
    'localhost',
    ...(bindAddress && bindAddress !== '0.0.0.0' && bindAddress !== '::' ? [bindAddress] : []),
  ];
  if (fs.existsSync(p.ca) && fs.existsSync(p.cert) && fs.existsSync(p.key)) {
    const existing = new x509.X509Certificate(fs.readFileSync(p.cert, 'utf8'));
    const san = existing.getExtension(x509.SubjectAlternativeNameExtension);
    const have = new Set((san?.names.items ?? []).map((n) => n.value));
    if (hosts.every((h) => have.has(h)) && existing.notAfter.getTime() > Date.now() + DAY) {
      return { ca: fs.readFileSync(p.ca, 'utf8'), cert: fs.readFileSync(p.cert, 'utf8'), key: fs.readFileSync(p.key, 'utf8') };
    }
  }
  const g = await generateCertificates(hosts);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(p.ca, g.ca);
  fs.writeFileSync(p.cert, g.cert);
  fs.writeFileSync(p.key, g.key, { mode: 0o600 });
  return g;
}
