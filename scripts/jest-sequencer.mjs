// Jest runs the longest suites first so that neither worker is left with a long suite at the end
// of the run; it learns the durations from its cache of earlier runs, which a fresh clone (CI)
// does not have, and then falls back to file size, which put a 5-minute suite last. This gives
// it the durations recorded in test/suite-durations.json (`node scripts/record-suite-durations.mjs`
// after a full run) wherever its cache has none.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import Sequencer from '@jest/test-sequencer';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const recorded = JSON.parse(
  readFileSync(new URL('../test/suite-durations.json', import.meta.url), 'utf8'),
);

export default class RecordedDurationSequencer extends Sequencer {
  time(test) {
    return super.time(test) ?? recorded[relative(ROOT, test.path)];
  }
}
