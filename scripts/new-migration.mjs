#!/usr/bin/env node
// Writes prisma/migrations/<timestamp>_<name>/migration.sql: the SQL from the schema as last
// committed to the schema as it is now. Offline, no shadow database (see docs/DEVELOPMENT.md).
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const name = process.argv[2];
if (!name || !/^[a-z0-9_]+$/.test(name)) {
  console.error('usage: node scripts/new-migration.mjs <snake_case_name>');
  process.exit(2);
}
const committed = join(root, 'prisma', 'committed.prisma');
writeFileSync(committed, execFileSync('git', ['show', 'HEAD:prisma/schema.prisma'], { cwd: root }));
try {
  const sql = execFileSync(
    join(root, 'node_modules', '.bin', 'prisma'),
    [
      'migrate',
      'diff',
      '--from-schema-datamodel',
      committed,
      '--to-schema-datamodel',
      'prisma/schema.prisma',
      '--script',
    ],
    {
      cwd: root,
      encoding: 'utf8',
      // The CLI needs the variable only to read the schema; nothing connects.
      env: { DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/karpenter_fleet', ...process.env },
    },
  );
  if (!sql.trim()) throw new Error('the schema has not changed since the last commit');
  const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
  const dir = join(root, 'prisma', 'migrations', `${stamp}_${name}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'migration.sql'), sql.replace(/^Loaded Prisma config.*\n/m, ''));
  console.log(`wrote ${dir}/migration.sql`);
} finally {
  rmSync(committed, { force: true });
}
