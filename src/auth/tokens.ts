/**
 * Bearer-token authentication: the admin token created on first start (user `admin`, group
 * system:masters), and --token-auth-file in the reference's CSV format:
 * `token,user,uid,"group1,group2"`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { UserInfo } from '../api/user';

export const MASTERS = 'system:masters';

function parseCsvLine(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cur += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

/** Parse a token file; throws with the line number on a malformed line. */
export function parseTokenFile(text: string, file = 'token file'): Map<string, UserInfo> {
  const users = new Map<string, UserInfo>();
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const rec = parseCsvLine(line);
    if (rec.length < 3) throw new Error(`${file}: line ${i + 1}: need at least token,user,uid`);
    const [token, name, uid, groups] = rec as [string, string, string, string | undefined];
    if (!token || !name) throw new Error(`${file}: line ${i + 1}: empty token or user name`);
    users.set(token, {
      name,
      uid,
      groups: groups
        ? groups
            .split(',')
            .map((g) => g.trim())
            .filter(Boolean)
        : [],
    });
  });
  return users;
}

/** Service account tokens as the authenticator asks them (src/auth/sa-tokens.ts). */
/**
 * The uid of a stored object (undefined: none). Kind ServiceAccount by default; a token bound to
 * a Pod, Secret or Node also needs that object alive with the uid it was issued for.
 */
export type AccountLookup = (namespace: string, name: string, kind?: BoundKind) => string | undefined | Promise<string | undefined>;
export type BoundKind = 'ServiceAccount' | 'Pod' | 'Secret' | 'Node';

export interface ServiceAccountAuthenticator {
  authenticate(token: string, account: AccountLookup): Promise<UserInfo | undefined>;
}

export class TokenAuthenticator {
  private readonly users: Map<string, UserInfo>;

  constructor(
    users: Map<string, UserInfo>,
    /** Service account JWTs, with the uid of an account by namespace and name (undefined: gone). */
    private readonly serviceAccounts?: { tokens: ServiceAccountAuthenticator; account: AccountLookup },
  ) {
    // Users are resolved once, with system:authenticated added; requests share the objects.
    this.users = new Map([...users].map(([t, u]) => [t, Object.freeze({ ...u, groups: [...u.groups, 'system:authenticated'] })]));
  }

  /** The user of a request, or undefined without valid credentials (a promise for service account tokens). */
  authenticate(req: Request): UserInfo | undefined | Promise<UserInfo | undefined> {
    const h = req.headers.get('authorization');
    if (!h || h.length < 8 || h.slice(0, 7).toLowerCase() !== 'bearer ') return undefined;
    return this.authenticateToken(h.slice(7).trim());
  }

  /** The user of a bearer token (a TokenReview's too), or undefined. */
  authenticateToken(token: string): UserInfo | undefined | Promise<UserInfo | undefined> {
    const u = this.users.get(token);
    if (u || !this.serviceAccounts) return u;
    return this.serviceAccounts.tokens.authenticate(token, this.serviceAccounts.account);
  }

  /** Whether a token is one of the static ones (audience-agnostic). */
  isStatic(token: string): boolean {
    return this.users.has(token);
  }
}

/** The admin token: created once (32 random bytes, hex) and kept in the data dir. */
export function adminToken(dataDir: string): string {
  const file = path.join(dataDir, 'admin.token');
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  const token = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex');
  fs.mkdirSync(dataDir, { recursive: true });
  fs.writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return token;
}

/** Write `<dataDir>/admin.kubeconfig` (server URL, CA data, token); returns its path. */
export function writeKubeconfig(dataDir: string, server: string, caPem: string | undefined, token: string): string {
  const file = path.join(dataDir, 'admin.kubeconfig');
  const cluster = caPem
    ? `    certificate-authority-data: ${Buffer.from(caPem).toString('base64')}\n`
    : '    insecure-skip-tls-verify: true\n';
  const text = `apiVersion: v1
kind: Config
clusters:
- name: svc
  cluster:
    server: ${server}
${cluster}users:
- name: admin
  user:
    token: ${token}
contexts:
- name: admin@svc
  context:
    cluster: svc
    user: admin
    namespace: default
current-context: admin@svc
preferences: {}
`;
  fs.writeFileSync(file, text, { mode: 0o600 });
  return file;
}
