// Writes test/suite-durations.json (suite path → milliseconds) from a full run's JSON report,
// for scripts/jest-sequencer.mjs:
//   node --experimental-vm-modules node_modules/jest/bin/jest.js --json --outputFile=/tmp/jest.json
//   node scripts/record-suite-durations.mjs /tmp/jest.json
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const [report] = process.argv.slice(2);
if (!report) throw new Error('usage: record-suite-durations.mjs <jest --json report>');
const { testResults } = JSON.parse(readFileSync(report, 'utf8'));
const durations = Object.fromEntries(
  testResults
    .map((suite) => [relative(ROOT, suite.name), Math.round(suite.endTime - suite.startTime)])
    .sort(([a], [b]) => (a < b ? -1 : 1)),
);
writeFileSync(
  new URL('../test/suite-durations.json', import.meta.url),
  `${JSON.stringify(durations, null, 2)}\n`,
);
process.stdout.write(`recorded ${Object.keys(durations).length} suites\n`);
