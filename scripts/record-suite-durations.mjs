// Writes test/suite-durations.json (suite path → milliseconds), which scripts/jest-sequencer.mjs
// reads where Jest's cache has no duration (a fresh machine, as CI's), from a full run: the
// summary reporter's test-artifacts/suite-times.json (the default), or Jest's JSON report:
//   npm test && node scripts/record-suite-durations.mjs
//   node --experimental-vm-modules node_modules/jest/bin/jest.js --json --outputFile=/tmp/jest.json
//   node scripts/record-suite-durations.mjs /tmp/jest.json
import { readFileSync, writeFileSync } from 'node:fs';
import { isAbsolute, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const [report = 'test-artifacts/suite-times.json'] = process.argv.slice(2);
const parsed = JSON.parse(readFileSync(report, 'utf8'));
/** [path relative to the repository, milliseconds] of each suite, from either form. */
const entries = Array.isArray(parsed)
  ? parsed.map((suite) => [suite.path, Math.round(suite.seconds * 1000)])
  : parsed.testResults.map((suite) => [
      relative(ROOT, suite.name),
      Math.round(suite.endTime - suite.startTime),
    ]);
const durations = Object.fromEntries(
  entries
    .map(([path, ms]) => [isAbsolute(path) ? relative(ROOT, path) : path, ms])
    .sort(([a], [b]) => (a < b ? -1 : 1)),
);
writeFileSync(
  new URL('../test/suite-durations.json', import.meta.url),
  `${JSON.stringify(durations, null, 2)}\n`,
);
process.stdout.write(`recorded ${Object.keys(durations).length} suites from ${report}\n`);
