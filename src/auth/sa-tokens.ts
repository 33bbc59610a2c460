/**
 * Service account tokens (the reference's serviceaccount token generator and authenticator):
 * RS256 JWTs signed with a key pair kept in the data dir (made on first start) or given by
 * --service-account-signing-key-file / --service-account-key-file, issued by TokenRequest
 * (`serviceaccounts/<name>/token`) and accepted as bearer tokens.
 *
 *   { iss, sub: "system:serviceaccount:<ns>:<name>", aud, exp, iat, nbf, jti,
 *     "kubernetes.io": { namespace, serviceaccount: { name, uid } } }
 *
 * A token authenticates while it has not expired, names this server's issuer and one of its
 * audiences, and its service account still exists with the same uid (deleted or recreated
 * accounts lose their tokens). Signed with `jose` (a well-kept JWT library), not by hand.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { exportJWK, exportPKCS8, exportSPKI, importPKCS8, importSPKI, type JWK, jwtVerify, SignJWT } from 'jose';
import type { UserInfo } from '../api/user';
import type { AccountLookup, BoundKind } from './tokens';

type Key = CryptoKey;

export interface IssueRequest {
  namespace: string;
  name: string;
  uid: string;
  audiences: string[];
  expirationSeconds: number;
  /** A bound object (Pod, Secret, Node) recorded in the claims. */
  bound?: { kind: string; name: string; uid: string };
}

/** The claims the authenticator needs back. */
interface Verified {
  namespace: string;
  name: string;
  uid: string;
  exp: number;
  /** The object the token is bound to (it stops working when that object goes). */
  bound?: { kind: BoundKind; name: string; uid: string };
  /** The user the token stands for, made once. */
  user?: UserInfo;
}

const BOUND_KINDS: BoundKind[] = ['Pod', 'Secret', 'Node'];

const MAX_CACHE = 10_000;

export class ServiceAccountTokens {
  private readonly verified = new Map<string, Verified>();

  private constructor(
    readonly issuer: string,
    private readonly privateKey: Key,
    private readonly publicKey: Key,
    private readonly jwk: JWK,
    readonly keyId: string,
  ) {}

  /**
   * The signing key from --service-account-signing-key-file (PKCS#8 PEM) or the data dir (made
   * on first start); the verifying key from --service-account-key-file or the signing key.
   */
  static async open(dataDir: string, opts: { issuer: string; signingKeyFile?: string; keyFile?: string }): Promise<ServiceAccountTokens> {
    const signingFile = opts.signingKeyFile || path.join(dataDir, 'sa.key');
    const publicFile = opts.keyFile || path.join(dataDir, 'sa.pub');
    if (!fs.existsSync(signingFile)) {
      const { generateKeyPair } = await import('jose');
      const pair = await generateKeyPair('RS256', { extractable: true, modulusLength: 2048 });
      fs.writeFileSync(signingFile, await exportPKCS8(pair.privateKey), { mode: 0o600 });
      fs.writeFileSync(publicFile, await exportSPKI(pair.publicKey));
    }
    const privateKey = await importPKCS8(fs.readFileSync(signingFile, 'utf8'), 'RS256', { extractable: true });
    let publicPem: string;
    if (fs.existsSync(publicFile)) publicPem = fs.readFileSync(publicFile, 'utf8');
    else {
      // Derive the public key from the private one (a signing key given without its public half).
      const jwk = await exportJWK(privateKey);
      const { importJWK } = await import('jose');
      const pub = (await importJWK({ kty: jwk.kty, n: jwk.n, e: jwk.e }, 'RS256', { extractable: true })) as Key;
      publicPem = await exportSPKI(pub);
    }
    const publicKey = await importSPKI(publicPem, 'RS256', { extractable: true });
    const jwk = await exportJWK(publicKey);
    // The reference's key id: base64url(sha256(DER of the public key)).
    const der = Buffer.from(publicPem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
    const keyId = Buffer.from(new Bun.CryptoHasher('sha256').update(der).digest()).toString('base64url');
    return new ServiceAccountTokens(opts.issuer, privateKey, publicKey, { ...jwk, kid: keyId, alg: 'RS256', use: 'sig' }, keyId);
  }

  async issue(r: IssueRequest, now = Date.now()): Promise<{ token: string; expirationTimestamp: string }> {
    const iat = Math.floor(now / 1000);
    const exp = iat + r.expirationSeconds;
    const k8s: Record<string, unknown> = { namespace: r.namespace, serviceaccount: { name: r.name, uid: r.uid } };
    if (r.bound) k8s[r.bound.kind.toLowerCase()] = { name: r.bound.name, uid: r.bound.uid };
    const token = await new SignJWT({ 'kubernetes.io': k8s })
      .setProtectedHeader({ alg: 'RS256', kid: this.keyId })
      .setIssuer(this.issuer)
      .setSubject(`system:serviceaccount:${r.namespace}:${r.name}`)
      .setAudience(r.audiences)
      .setIssuedAt(iat)
      .setNotBefore(iat)
      .setExpirationTime(exp)
      .setJti(crypto.randomUUID())
      .sign(this.privateKey);
    return { token, expirationTimestamp: new Date(exp * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') };
  }

  /**
   * The user of a token, if it verifies and its account (looked up by `account`) still has the
   * uid it was issued for; undefined otherwise. Verified tokens are remembered until they expire.
   */
  async authenticate(token: string, account: AccountLookup): Promise<UserInfo | undefined> {
    let v = this.verified.get(token);
    const nowSec = Date.now() / 1000;
    if (!v) {
      if (token.split('.').length !== 3) return undefined;
      try {
        const { payload } = await jwtVerify(token, this.publicKey, { issuer: this.issuer, audience: this.issuer, algorithms: ['RS256'] });
        const k8s = payload['kubernetes.io'] as
          | ({ namespace?: string; serviceaccount?: { name?: string; uid?: string } } & Record<
              string,
              { name?: string; uid?: string } | string | undefined
            >)
          | undefined;
        if (!k8s?.namespace || !k8s.serviceaccount?.name || !k8s.serviceaccount.uid || typeof payload.exp !== 'number') return undefined;
        v = { namespace: k8s.namespace, name: k8s.serviceaccount.name, uid: k8s.serviceaccount.uid, exp: payload.exp };
        for (const kind of BOUND_KINDS) {
          const b = k8s[kind.toLowerCase()];
          if (b && typeof b === 'object' && b.name && b.uid) v.bound = { kind, name: b.name, uid: b.uid };
        }
        if (this.verified.size >= MAX_CACHE) this.verified.clear();
        this.verified.set(token, v);
      } catch {
        return undefined;
      }
    }
    if (v.exp <= nowSec) {
      this.verified.delete(token);
      return undefined;
    }
    if ((await account(v.namespace, v.name)) !== v.uid) return undefined;
    if (v.bound && (await account(v.bound.kind === 'Node' ? '' : v.namespace, v.bound.name, v.bound.kind)) !== v.bound.uid)
      return undefined;
    // One frozen user per verified token, shared by its requests as the static tokens' users are
    // (priority and fairness keeps its classification per user object).
    v.user ??= Object.freeze({
      name: `system:serviceaccount:${v.namespace}:${v.name}`,
      uid: v.uid,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${v.namespace}`, 'system:authenticated'],
    });
    return v.user;
  }

  /** /.well-known/openid-configuration */
  openidConfiguration(): Record<string, unknown> {
    return {
      issuer: this.issuer,
      jwks_uri: `${this.issuer}/openid/v1/jwks`,
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
    };
  }

  /** /openid/v1/jwks */
  jwks(): Record<string, unknown> {
    return { keys: [this.jwk] };
  }
}
