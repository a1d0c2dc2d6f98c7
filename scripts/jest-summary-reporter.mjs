// Prints the run's totals as one plain line ("tests: N passed, N failed, N skipped") that any
// CI log reader understands, after Jest's own summary; the time of each project (its suites
// summed, and the wall time from its first suite's start to its last one's end: the real-server
// projects have a budget of their own, issue 49); and the slowest suites, so that a run drifting
// towards its budget shows where its time went. Every suite's time goes to
// test-artifacts/suite-times.json, for a closing note or scripts/record-suite-durations.mjs's
// sequencing.
import { mkdirSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';

const SLOWEST_SHOWN = 20;

export default class SummaryReporter {
  onRunComplete(_contexts, results) {
    const { numPassedTests, numFailedTests, numPendingTests, numTodoTests } = results;
    const suites = results.testResults
      .map((suite) => ({
        path: relative(process.cwd(), suite.testFilePath),
        project: suite.displayName?.name ?? '',
        start: suite.perfStats.start,
        end: suite.perfStats.end,
        seconds: (suite.perfStats.end - suite.perfStats.start) / 1000,
      }))
      .sort((a, b) => b.seconds - a.seconds);
    const total = suites.reduce((sum, suite) => sum + suite.seconds, 0);
    const projects = new Map();
    for (const suite of suites) {
      const p = projects.get(suite.project) ?? { suites: 0, seconds: 0, start: Infinity, end: 0 };
      p.suites++;
      p.seconds += suite.seconds;
      p.start = Math.min(p.start, suite.start);
      p.end = Math.max(p.end, suite.end);
      projects.set(suite.project, p);
    }
    process.stdout.write(
      'projects (suites, seconds summed over workers, wall time from first start to last end):\n' +
        [...projects]
          .sort(([, a], [, b]) => b.seconds - a.seconds)
          .map(
            ([name, p]) =>
              `  ${(name || '(none)').padEnd(16)} ${String(p.suites).padStart(4)} suites ${p.seconds.toFixed(0).padStart(6)} s summed ${((p.end - p.start) / 1000).toFixed(0).padStart(6)} s wall\n`,
          )
          .join(''),
    );
    process.stdout.write(
      `slowest suites (of ${suites.length}, ${total.toFixed(0)} s summed over workers):\n` +
        suites
          .slice(0, SLOWEST_SHOWN)
          .map((suite) => `  ${suite.seconds.toFixed(1).padStart(7)} s  ${suite.path}\n`)
          .join(''),
    );
    mkdirSync('test-artifacts', { recursive: true });
    writeFileSync(
      'test-artifacts/suite-times.json',
      `${JSON.stringify(
        suites.map(({ path, project, seconds }) => ({ path, project, seconds })),
        null,
        2,
      )}\n`,
    );
    process.stdout.write(
      `tests: ${numPassedTests} passed, ${numFailedTests} failed, ${numPendingTests + numTodoTests} skipped\n`,
    );
  }
}
