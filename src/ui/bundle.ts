/**
 * The browser's code: src/ui/client/ bundled by Bun.build (no other toolchain), once per process
 * and kept in memory (~100 KB of JavaScript, uPlot and TanStack Query core included). The
 * builder starts it at start without waiting for it; the first request for it waits if needed.
 * The build takes 23-35 ms alone. Server start, 8 runs alternated on the shared 2-core VM
 * (2026-11-26): time to ready median 1,232 ms with --enable-ui=false against 1,104 ms with the
 * build, CPU at ready 830 ms both, 300 ms later 1,070 against 1,040 ms: no difference above
 * the noise, so it is not deferred to the first /ui request.
 * The client has its own tsconfig (DOM types): `tsc --noEmit -p src/ui/client`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface Asset {
  body: Uint8Array;
  type: string;
  etag: string;
}

const ENTRY = path.join(import.meta.dir, 'client', 'main.ts');

async function build(): Promise<{ js: Asset; css: Asset }> {
  const out = await Bun.build({ entrypoints: [ENTRY], target: 'browser', format: 'esm', minify: true, sourcemap: 'none' });
  if (!out.success) throw new Error(`bug: the dashboard's client does not build: ${out.logs.map(String).join('; ')}`);
  const entry = out.outputs.find((o) => o.kind === 'entry-point');
  if (!entry) throw new Error('bug: the dashboard bundle has no entry point');
  const js = new Uint8Array(await entry.arrayBuffer());
  const uplotCss = fs.readFileSync(Bun.resolveSync('uplot/dist/uPlot.min.css', import.meta.dir));
  const own = fs.readFileSync(path.join(import.meta.dir, 'client', 'style.css'));
  const css = new Uint8Array(Buffer.concat([uplotCss, Buffer.from('\n'), own]));
  const tag = (b: Uint8Array) => `"${Bun.hash(b).toString(16)}"`;
  return {
    js: { body: js, type: 'text/javascript; charset=utf-8', etag: tag(js) },
    css: { body: css, type: 'text/css; charset=utf-8', etag: tag(css) },
  };
}

/** The bundle, built on first use and shared by every later request. */
export class ClientBundle {
  private built: Promise<{ js: Asset; css: Asset }> | undefined;
  /** How long the build took (ms), once built. */
  buildMs = 0;

  get(): Promise<{ js: Asset; css: Asset }> {
    if (!this.built) {
      const t0 = performance.now();
      this.built = build().then((b) => {
        this.buildMs = performance.now() - t0;
        return b;
      });
      // A failed build is retried by the next request.
      this.built.catch(() => {
        this.built = undefined;
      });
    }
    return this.built;
  }
}
