#!/usr/bin/env node
// Compile with tsc (esbuild-based runners drop the decorator metadata NestJS needs), then rewrite
// the @fleet/* path aliases to relative imports so plain `node` runs the output.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);
execFileSync(bin('tsc'), ['-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
execFileSync(bin('tsc-alias'), ['-p', 'tsconfig.build.json', '--resolve-full-paths'], {
  cwd: root,
  stdio: 'inherit',
});
// Non-TypeScript assets read at run time, found by the compiled code beside itself: the upstream
// CRDs, the CRDs the CloudProviders write, the fixtures the demo and benchmarks seed, the pinned
// upstream releases (the emulated API server reports Kubernetes'), and the
// sidecar's RBAC manifest, which emulated clusters grant it.
for (const dir of [
  'deploy',
  'libs/crd-schema/upstream',
  'libs/cloud-provider/src/aws/crds',
  'test/fixtures',
  'test/upstream/versions.json',
]) {
  rmSync(join(root, 'dist', dir), { recursive: true, force: true });
  mkdirSync(dirname(join(root, 'dist', dir)), { recursive: true });
  cpSync(join(root, dir), join(root, 'dist', dir), { recursive: true });
}

// The sidecar's bundle (dist/apps/sidecar/main.mjs and its chunks), which deploy/ and every test run.
execFileSync(process.execPath, [join(root, 'scripts', 'bundle-sidecar.mjs')], {
  cwd: root,
  stdio: 'inherit',
});

// The web console: operation types regenerated from the committed schema.gql (so a schema change
// that breaks an operation fails here), then bundled by Vite into dist/apps/console, which the API
// serves at / and the container image carries with the rest of dist/apps.
execFileSync(bin('graphql-codegen'), ['--config', 'apps/console/codegen.ts', '--silent'], {
  cwd: root,
  stdio: 'inherit',
});
// NODE_ENV=production whoever runs this: Vite keeps an inherited NODE_ENV (Jest sets `test`), and
// under anything else React's development build lands in the bundle (half as large again, over
// apps/console/budget.json).
execFileSync(bin('vite'), ['build', '--config', 'apps/console/vite.config.ts'], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, NODE_ENV: 'production' },
});

// Precompressed copies of the console's text files (Brotli at its best, gzip at 9), beside each
// file, for the API to send to a browser that accepts them (apps/api/src/console): compressed
// once here rather than on every request. Only where it saves something.
const consoleDir = join(root, 'dist', 'apps', 'console');
for (const entry of readdirSync(consoleDir, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !/\.(html|js|css|svg|json)$/.test(entry.name)) continue;
  const file = join(entry.parentPath, entry.name);
  const body = readFileSync(file);
  const br = brotliCompressSync(body, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
      [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
    },
  });
  const gz = gzipSync(body, { level: 9 });
  if (br.length < body.length) writeFileSync(`${file}.br`, br);
  if (gz.length < body.length) writeFileSync(`${file}.gz`, gz);
}
