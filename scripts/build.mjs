#!/usr/bin/env node
// Compile with tsc (esbuild-based runners drop the decorator metadata NestJS needs), then rewrite
// the @fleet/* path aliases to relative imports so plain `node` runs the output.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);
execFileSync(bin('tsc'), ['-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
execFileSync(bin('tsc-alias'), ['-p', 'tsconfig.build.json', '--resolve-full-paths'], {
  cwd: root,
  stdio: 'inherit',
});
// Non-TypeScript assets the apps read at run time (CRD manifests shipped with the CloudProvider).
for (const dir of ['libs/cloud-provider/src/aws/crds']) {
  mkdirSync(join(root, 'dist', dir), { recursive: true });
  try {
    cpSync(join(root, dir), join(root, 'dist', dir), { recursive: true });
  } catch {
    // absent until the CloudProvider ships CRDs of its own
  }
}
