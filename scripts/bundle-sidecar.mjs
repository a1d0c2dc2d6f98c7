#!/usr/bin/env node
// The sidecar ships as a bundle (dist/apps/sidecar/main.mjs and its chunks in
// dist/apps/sidecar/chunks/) built from tsc's output: a sidecar runs on every cluster, and most of
// its memory at rest is the code it loads. Minified, tree-shaken, ASCII-only chunks (V8 keeps an
// ASCII source in one byte per character, any other in two) hold less source on the heap than
// node_modules would. docs/PERFORMANCE.md (sidecar memory) has the numbers.
//
// Why chunks and not one file (issue 48, target 5):
// - V8 parses a module's top level in one go, in malloc'd zone memory: a single 7.6 MB file took
//   ~85 MB at its peak, which glibc then kept (freed, but fragmented under later allocations):
//   ~75 MB of RSS for nothing. One chunk per package bounds that peak by the largest package.
// - Each driver's module is imported by the registry only when the sidecar's first order names
//   it, so its chunks (its cloud's SDK, the Cluster API code) stay on disk on other platforms.
import { rolldown } from 'rolldown';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const entry = join(root, 'dist/apps/sidecar/src/bin.js');
const outDir = join(root, 'dist/apps/sidecar');
const chunksDir = join(outDir, 'chunks');
const libs = join(root, 'dist/libs') + '/';

/** `@scope/name` or `name` of a module in node_modules, the innermost one. */
function packageOf(id) {
  const match = /.*node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(id);
  return match?.[1];
}

rmSync(chunksDir, { recursive: true, force: true });
rmSync(join(outDir, 'main.mjs'), { force: true });
rmSync(join(outDir, 'main.mjs.map'), { force: true });
const bundle = await rolldown({
  input: entry,
  platform: 'node',
  logLevel: 'warn',
  // The entry (bin.ts) runs the sidecar and exports nothing; chunks may be shaped freely.
  preserveEntrySignatures: false,
  // BullMQ's package resolves to its CommonJS build for Node, which cannot be tree-shaken: the
  // sidecar, which only runs a Worker, carried its PostgreSQL backend and the pg driver. Its
  // ESM build ("module") is the same code as modules.
  plugins: [
    {
      name: 'bullmq-esm',
      resolveId: (source) =>
        source === 'bullmq' ? join(root, 'node_modules/bullmq/dist/esm/index.js') : null,
    },
  ],
  treeshake: {
    // Our libraries do nothing when imported (no registration, no I/O at module level), so a
    // barrel's re-export of a module the sidecar does not use (another platform's driver) must
    // not pin it, and what it imports, into the start-up chunks.
    //
    // client-node's modules likewise, but for its polyfill: its index re-exports ~800 generated
    // models and API classes, which the sidecar never imports (it speaks JSON through
    // @fleet/discovery's RestClient), and without this their class definitions, with static
    // fields, would count as side effects and all load (1 MB minified, ~14 MB of RSS).
    moduleSideEffects: (id) =>
      !id.startsWith(libs) &&
      !id.includes('/node_modules/bullmq/') &&
      !(id.includes('/node_modules/@kubernetes/client-node/') && !id.endsWith('/polyfill.js')),
  },
});
const { output } = await bundle.write({
  dir: outDir,
  entryFileNames: 'main.mjs',
  chunkFileNames: 'chunks/[name]-[hash].mjs',
  format: 'esm',
  codeSplitting: {
    // Each package is its own chunk, and only its own modules: a package's dependencies must not
    // follow it into its chunk, or a start-up package drags a lazy one's code along (or the other
    // way round). strictExecutionOrder keeps module evaluation in import order across chunks.
    includeDependenciesRecursively: false,
    groups: [
      {
        name: (id) => packageOf(id)?.replace(/^@/, '').replace('/', '-') ?? null,
        debugName: 'one chunk per package',
      },
    ],
  },
  strictExecutionOrder: true,
  sourcemap: true,
  minify: { compress: true, mangle: { keepNames: true }, codegen: { asciiOnly: true } },
});
await bundle.close();

/**
 * Modules find files beside themselves (the upstream CRDs, the NodeClass CRDs the AWS driver
 * installs) with `new URL('<dir>/', import.meta.url)`; in a chunk `import.meta.url` is the
 * chunk's, so each such URL is rewritten relative to the chunk (dist/ ships beside it). Any other
 * use of `import.meta.url` than these, the one `createRequire` of rolldown's runtime and msgpackr's
 * (BullMQ's, its optional native `msgpackr-extract`, looked up in node_modules from wherever the
 * chunk is, and skipped when absent) fails the build rather than resolving somewhere else at run
 * time.
 */
const MSGPACKR_EXTRACT = '(import.meta.url)(`msgpackr-extract`)';
let relocated = 0;
let uses = 0;
let bytes = 0;
let files = 0;
for (const chunk of output) {
  if (chunk.type !== 'chunk') continue;
  const file = join(outDir, chunk.fileName);
  let code = readFileSync(file, 'utf8');
  uses += code.split('import.meta.url').length - 1 - (code.split(MSGPACKR_EXTRACT).length - 1);
  // Each URL as the minifier writes it → the directories it names, from this chunk's modules.
  const assetUrls = new Map();
  for (const id of chunk.moduleIds) {
    if (!id.startsWith(join(root, 'dist') + '/')) continue;
    const source = readFileSync(id, 'utf8');
    for (const [, literal] of source.matchAll(/new URL\('([^']+)', import\.meta\.url\)/g)) {
      const minified = `new URL(\`${literal}\`,import.meta.url)`;
      assetUrls.set(
        minified,
        (assetUrls.get(minified) ?? new Set()).add(join(dirname(id), literal)),
      );
    }
  }
  for (const [minified, assets] of assetUrls) {
    const occurrences = code.split(minified).length - 1;
    if (occurrences === 0) continue;
    if (occurrences > 1 || assets.size > 1)
      throw new Error(`bundle: ${minified} comes from more than one module; cannot relocate it`);
    const [asset] = assets;
    const target = relative(dirname(file), asset).split('\\').join('/');
    code = code.replace(minified, `new URL(\`${target}/\`,import.meta.url)`);
    relocated++;
  }
  writeFileSync(file, code);
  bytes += code.length;
  files++;
}
if (uses - relocated !== 1)
  throw new Error(
    `bundle: ${uses - relocated - 1} use(s) of import.meta.url not relocated; see scripts/bundle-sidecar.mjs`,
  );
console.log(
  `sidecar bundle: ${relative(root, join(outDir, 'main.mjs'))} and ${files - 1} chunks, ${(bytes / 2 ** 20).toFixed(1)} MB, ${relocated} asset URLs relocated`,
);
