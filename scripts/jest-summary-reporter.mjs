// Prints the run's totals as one plain line ("tests: N passed, N failed, N skipped") that any
// CI log reader understands, after Jest's own summary, and the slowest suites, so that a run
// drifting towards the 20-minute budget shows where its time went.
import { relative } from 'node:path';

const SLOWEST_SHOWN = 20;

export default class SummaryReporter {
  onRunComplete(_contexts, results) {
    const { numPassedTests, numFailedTests, numPendingTests, numTodoTests } = results;
    const suites = results.testResults
      .map((suite) => ({
        path: relative(process.cwd(), suite.testFilePath),
        seconds: (suite.perfStats.end - suite.perfStats.start) / 1000,
      }))
      .sort((a, b) => b.seconds - a.seconds);
    const total = suites.reduce((sum, suite) => sum + suite.seconds, 0);
    process.stdout.write(
      `slowest suites (of ${suites.length}, ${total.toFixed(0)} s summed over workers):\n` +
        suites
          .slice(0, SLOWEST_SHOWN)
          .map((suite) => `  ${suite.seconds.toFixed(1).padStart(7)} s  ${suite.path}\n`)
          .join(''),
    );
    process.stdout.write(
      `tests: ${numPassedTests} passed, ${numFailedTests} failed, ${numPendingTests + numTodoTests} skipped\n`,
    );
  }
}
