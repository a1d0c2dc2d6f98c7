#!/usr/bin/env node
// The sidecar ships as one bundle (dist/apps/sidecar/main.mjs) built from tsc's output: a sidecar
// runs on every cluster, and most of its heap at rest was the source text of modules it loads and
// never calls (client-node's generated APIs, other platforms' SDK clients). One minified,
// tree-shaken, ASCII-only file (V8 keeps an ASCII source in one byte per character, any other in
// two) takes about half of that heap away; docs/PERFORMANCE.md has the numbers.
import { rolldown } from 'rolldown';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const entry = join(root, 'dist/apps/sidecar/src/main.js');
const bundleFile = join(root, 'dist/apps/sidecar/main.mjs');

const bundle = await rolldown({ input: entry, platform: 'node', logLevel: 'warn' });
const { output } = await bundle.write({
  file: bundleFile,
  format: 'esm',
  codeSplitting: false,
  sourcemap: true,
  minify: { compress: true, mangle: { keepNames: true }, codegen: { asciiOnly: true } },
});
await bundle.close();

/**
 * Modules find files beside themselves (the upstream CRDs, the NodeClass CRDs the AWS driver
 * installs) with `new URL('<dir>/', import.meta.url)`; in the bundle `import.meta.url` is the
 * bundle's, so each such URL is rewritten relative to the bundle (dist/ ships beside it). Any
 * other use of `import.meta.url` than these, `createRequire` and the entry's own check fails the
 * build rather than resolving somewhere else at run time.
 */
let code = readFileSync(bundleFile, 'utf8');
const modules = readdirSync(join(root, 'dist'), { recursive: true, withFileTypes: true }).filter(
  (e) => e.isFile() && e.name.endsWith('.js') && !e.parentPath.includes('node_modules'),
);
let rewritten = 0;
for (const { parentPath, name } of modules) {
  const source = readFileSync(join(parentPath, name), 'utf8');
  for (const [, literal] of source.matchAll(/new URL\('([^']+)', import\.meta\.url\)/g)) {
    const minified = `new URL(\`${literal}\`,import.meta.url)`;
    const occurrences = code.split(minified).length - 1;
    if (occurrences === 0) continue;
    if (occurrences > 1)
      throw new Error(`bundle: ${minified} comes from more than one module; cannot relocate it`);
    const target = relative(dirname(bundleFile), join(parentPath, literal)).split('\\').join('/');
    code = code.replace(minified, `new URL(\`${target}/\`,import.meta.url)`);
    rewritten++;
  }
}
const unexplained = code.split('import.meta.url').length - 1 - rewritten - 2;
if (unexplained !== 0)
  throw new Error(
    `bundle: ${unexplained} use(s) of import.meta.url not relocated; see scripts/bundle-sidecar.mjs`,
  );
writeFileSync(bundleFile, code);
const size = (output[0].code.length / 2 ** 20).toFixed(1);
console.log(
  `sidecar bundle: ${relative(root, bundleFile)}, ${size} MB, ${rewritten} asset URLs relocated`,
);
