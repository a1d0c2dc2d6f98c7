import { describe, expect, it } from '@jest/globals';
import { bar, RolloutProgress, type RolloutProgressView } from './progress.js';

const view = (
  state: string,
  clusters: [string, string][],
  reason: string | null = null,
): RolloutProgressView => {
  const count = (s: string) => clusters.filter(([, st]) => st === s).length;
  return {
    id: 'r1',
    state,
    reason,
    currentWave: clusters.some(([n, s]) => n === 'b' && s !== 'PENDING') ? 1 : 0,
    counts: {
      total: clusters.length,
      pending: count('PENDING'),
      applying: count('APPLYING'),
      healthy: count('HEALTHY'),
      failed: count('FAILED'),
      skipped: count('SKIPPED'),
    },
    waves: [
      {
        index: 0,
        state: 'RUNNING',
        clusters: [clusters[0]!].map(([n, s]) => ({ clusterName: n, state: s, reason: null })),
      },
      {
        index: 1,
        state: 'PENDING',
        clusters: clusters.slice(1).map(([n, s]) => ({
          clusterName: n,
          state: s,
          reason: s === 'FAILED' ? 'Degraded: NodePoolRejected' : null,
        })),
      },
    ],
  };
};

describe('rollout progress', () => {
  it('prints plain lines when not a terminal: cluster transitions, then the state when it changed', () => {
    const p = new RolloutProgress(false);
    expect(
      p.update(
        view('RUNNING', [
          ['a', 'APPLYING'],
          ['b', 'PENDING'],
        ]),
      ),
    ).toBe(
      'cluster/a APPLYING (wave 1)\nrollout/r1 RUNNING wave 1/2: 0/2 healthy, 1 applying, 0 failed, 1 pending\n',
    );
    // Nothing changed: nothing printed (the periodic re-read adds no noise to a CI log).
    expect(
      p.update(
        view('RUNNING', [
          ['a', 'APPLYING'],
          ['b', 'PENDING'],
        ]),
      ),
    ).toBe('');
    expect(
      p.update(
        view(
          'FAILED',
          [
            ['a', 'HEALTHY'],
            ['b', 'FAILED'],
          ],
          'maxFailures exceeded',
        ),
      ),
    ).toBe(
      'cluster/a HEALTHY (wave 1)\ncluster/b FAILED (wave 2): Degraded: NodePoolRejected\n' +
        'rollout/r1 FAILED wave 2/2: 1/2 healthy, 0 applying, 1 failed, 0 pending (maxFailures exceeded)\n',
    );
  });

  it('redraws one bar line in place on a terminal, ending with a newline', () => {
    const p = new RolloutProgress(true, 200);
    const first = p.update(
      view('RUNNING', [
        ['a', 'APPLYING'],
        ['b', 'PENDING'],
      ]),
    );
    expect(first).toMatch(/^cluster\/a APPLYING \(wave 1\)\n\[\.{20}\] rollout\/r1 RUNNING/);
    expect(first.endsWith('\n')).toBe(false);
    const done = p.update(
      view('COMPLETED', [
        ['a', 'HEALTHY'],
        ['b', 'HEALTHY'],
      ]),
    );
    expect(done.startsWith('\r\u001b[K')).toBe(true);
    expect(done).toMatch(/\[#{20}\] rollout\/r1 COMPLETED wave 2\/2: 2\/2 healthy/);
    expect(done.endsWith('\n')).toBe(true);
  });

  it('fills the bar with the clusters done', () => {
    expect(bar(0, 4, 8)).toBe('[........]');
    expect(bar(1, 4, 8)).toBe('[##......]');
    expect(bar(4, 4, 8)).toBe('[########]');
    expect(bar(0, 0, 4)).toBe('[####]');
  });
});
