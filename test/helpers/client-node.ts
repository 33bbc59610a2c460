/**
 * Run @kubernetes/client-node (unmodified) against a test server in a child Bun process (see
 * test/client-node.test.ts for why a child: client-node's undici dispatcher is a no-op under Bun,
 * so the CA comes from NODE_EXTRA_CA_CERTS at process start).
 *
 *   const r = await runClient(srv, `const core = kc.makeApiClient(k8s.CoreV1Api); return (await core.listNamespace()).kind;`);
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Server } from './server';

const ROOT = path.resolve(import.meta.dir, '../..');

/** Run `body` (an async function body with `k8s` and `kc` in scope) in a child Bun; returns its JSON result. */
// biome-ignore lint/suspicious/noExplicitAny: the child's JSON result
export async function runClient(srv: Server, body: string): Promise<any> {
  const lib = Bun.resolveSync('@kubernetes/client-node', ROOT);
  const script = path.join(srv.dataDir, `client-${Date.now()}-${Math.random().toString(36).slice(2)}.ts`);
  fs.writeFileSync(
    script,
    `import * as k8s from ${JSON.stringify(lib)};
const kc = new k8s.KubeConfig();
kc.loadFromFile(${JSON.stringify(srv.kubeconfig)});
const result = await (async () => {
${body}
})();
process.stdout.write(JSON.stringify(result));
`,
  );
  const proc = Bun.spawn([process.execPath, script], {
    cwd: ROOT,
    env: { ...process.env, NODE_EXTRA_CA_CERTS: path.join(srv.dataDir, 'ca.crt') },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`client exited ${code}: ${err}${out}`);
  return JSON.parse(out);
}
