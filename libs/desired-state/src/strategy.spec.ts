import { describe, expect, it } from '@jest/globals';
import {
  karpenterGateViolation,
  planStages,
  StrategyDefinition,
  UnheldApprovalGate,
} from './strategy.js';

const cluster = (name: string, labels: Record<string, string>) => ({
  id: `id-${name}`,
  name,
  labels,
});
const fleet = [
  cluster('eu-1', { env: 'prod', region: 'eu', canary: 'true' }),
  cluster('eu-2', { env: 'prod', region: 'eu' }),
  cluster('us-1', { env: 'prod', region: 'us' }),
  cluster('us-2', { env: 'prod', region: 'us' }),
  cluster('us-3', { env: 'prod', region: 'us' }),
  cluster('ap-1', { env: 'prod', region: 'ap' }),
];
const names = (waves: { clusters: { name: string }[] }[]) =>
  waves.map((w) => w.clusters.map((c) => c.name));
const parse = (input: unknown) => StrategyDefinition.safeParse(input);
const firstIssue = (input: unknown) => {
  const r = parse(input);
  return r.success
    ? undefined
    : { path: r.error.issues[0]!.path, message: r.error.issues[0]!.message };
};

describe('planStages', () => {
  it('takes the remaining clusters a selector stage matches, percentages cumulative over all', () => {
    const { stages } = StrategyDefinition.parse({
      stages: [
        { selector: 'canary=true', approval: true },
        { selector: 'region=eu', pauseSeconds: 30 },
        { percent: 50 },
        { percent: 100, minHealthySeconds: 5 },
      ],
    });
    const waves = planStages(fleet, stages);
    expect(names(waves)).toEqual([['eu-1'], ['eu-2'], ['ap-1'], ['us-1', 'us-2', 'us-3']]);
    expect(waves.map((w) => [w.selector, w.approval, w.pauseSeconds, w.minHealthySeconds])).toEqual(
      [
        ['canary=true', true, 0, 60],
        ['region=eu', false, 30, 60],
        [null, false, 0, 60],
        [null, false, 0, 5],
      ],
    );
  });

  it('moves the gates of a stage that adds nobody to the wave before it', () => {
    const { stages } = StrategyDefinition.parse({
      stages: [
        { count: 1 },
        { selector: 'region=mars', approval: true, pauseSeconds: 10 },
        { percent: 100 },
      ],
    });
    const waves = planStages(fleet, stages);
    expect(names(waves)).toEqual([['ap-1'], ['eu-1', 'eu-2', 'us-1', 'us-2', 'us-3']]);
    expect(waves[0]).toMatchObject({ approval: true, pauseSeconds: 10 });
  });

  it('refuses an approval gate on a leading stage that takes nobody, naming the stage', () => {
    const { stages } = StrategyDefinition.parse({
      stages: [
        { selector: 'region=mars', pauseSeconds: 10 },
        { selector: 'tier=edge', approval: true },
        { percent: 100 },
      ],
    });
    expect(() => planStages(fleet, stages)).toThrow(UnheldApprovalGate);
    expect(() => planStages(fleet, stages)).toThrow(
      /^stage 1 \(selector tier=edge\) has an approval gate but takes none of the 6 clusters/,
    );
    // A leading timed pause alone has nothing to soak and goes quietly.
    const paused = StrategyDefinition.parse({
      stages: [{ selector: 'region=mars', pauseSeconds: 10 }, { percent: 100 }],
    });
    expect(names(planStages(fleet, paused.stages))).toHaveLength(1);
  });

  it('ends with every cluster: what no stage took forms a last wave without gates', () => {
    const { stages } = StrategyDefinition.parse({
      stages: [{ selector: 'region=us', approval: true }],
    });
    const waves = planStages(fleet, stages);
    expect(names(waves)).toEqual([
      ['us-1', 'us-2', 'us-3'],
      ['ap-1', 'eu-1', 'eu-2'],
    ]);
    expect(waves[1]).toMatchObject({ approval: false, pauseSeconds: 0, selector: null });
  });
});

describe('StrategyDefinition', () => {
  it('defaults maxFailures, the wave timeout and each stage', () => {
    expect(StrategyDefinition.parse({ stages: [{ percent: 100 }] })).toEqual({
      stages: [{ percent: 100, minHealthySeconds: 60, approval: false, pauseSeconds: 0 }],
      maxFailures: 0,
      waveTimeoutSeconds: 1800,
      maxNodeClaimLaunchFailures: null,
      maxPendingPodSeconds: null,
    });
  });

  it('names the field of a bad stage', () => {
    expect(firstIssue({ stages: [{ count: 1 }, { selector: 'env in (' }] })).toMatchObject({
      path: ['stages', 1, 'selector'],
      message: expect.stringContaining('invalid label selector'),
    });
    expect(firstIssue({ stages: [{ count: 1, selector: 'a=b' }] })).toMatchObject({
      path: ['stages', 0, 'count'],
      message: 'give exactly one of selector, percent or count',
    });
    expect(firstIssue({ stages: [{ approval: true }] })).toMatchObject({
      path: ['stages', 0, 'selector'],
    });
    expect(firstIssue({ stages: [{ percent: 50 }, { percent: 20 }] })).toMatchObject({
      path: ['stages', 1, 'percent'],
    });
    expect(firstIssue({ stages: [{ percent: 100, pauseSeconds: -1 }] })).toMatchObject({
      path: ['stages', 0, 'pauseSeconds'],
    });
    expect(firstIssue({ stages: [{ percent: 100, colour: 'red' }] })).toMatchObject({
      path: ['stages', 0],
    });
    expect(
      firstIssue({ stages: [{ percent: 100, minHealthySeconds: 600 }], waveTimeoutSeconds: 600 }),
    ).toMatchObject({ path: ['waveTimeoutSeconds'] });
    expect(firstIssue({ stages: [{ percent: 100 }], maxPendingPodSeconds: 0 })).toMatchObject({
      path: ['maxPendingPodSeconds'],
    });
  });
});

describe('karpenterGateViolation', () => {
  const gates = { maxNodeClaimLaunchFailures: 1, maxPendingPodSeconds: 300 };
  const now = new Date('2026-12-02T12:00:00.000Z');
  const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000);
  const iso = (seconds: number) => ago(seconds).toISOString();
  // The change reached the cluster ten minutes ago.
  const clock = { now, appliedAt: ago(600), reportedAt: ago(5) };

  it('fails a cluster past a bound, naming the gate', () => {
    expect(
      karpenterGateViolation({ nodeClaimLaunchFailureTimes: [iso(10), iso(20)] }, gates, clock),
    ).toMatch(/^NodeClaimLaunchFailures: 2 NodeClaims failed to launch/);
    expect(karpenterGateViolation({ oldestPendingPodSince: iso(301) }, gates, clock)).toMatch(
      /^PodsPendingTooLong: .*301s since the change, more than maxPendingPodSeconds 300/,
    );
  });

  it('counts only what happened since the change was applied', () => {
    // Two launches failed an hour ago, one since: not more than 1.
    expect(
      karpenterGateViolation(
        {
          nodeClaimLaunchFailures: 3,
          nodeClaimLaunchFailureTimes: [iso(10), iso(3600), iso(3601)],
        },
        gates,
        clock,
      ),
    ).toBeUndefined();
    // A pod stuck for a day counts from the change: 600s under it, more than 300.
    expect(
      karpenterGateViolation({ oldestPendingPodSince: iso(86_400) }, gates, {
        ...clock,
        appliedAt: ago(200),
      }),
    ).toBeUndefined();
    expect(karpenterGateViolation({ oldestPendingPodSince: iso(86_400) }, gates, clock)).toMatch(
      /pending for 600s since the change/,
    );
    // A full list, all since the change: the total counts.
    const full = Array.from({ length: 64 }, (_, i) => iso(i));
    expect(
      karpenterGateViolation(
        { nodeClaimLaunchFailures: 90, nodeClaimLaunchFailureTimes: full },
        { maxNodeClaimLaunchFailures: 70, maxPendingPodSeconds: null },
        clock,
      ),
    ).toMatch(/^NodeClaimLaunchFailures: 90 /);
  });

  it('reads what an older sidecar reports: a count, and an age dated by its report', () => {
    expect(karpenterGateViolation({ nodeClaimLaunchFailures: 2 }, gates, clock)).toMatch(
      /^NodeClaimLaunchFailures: 2 /,
    );
    expect(karpenterGateViolation({ oldestPendingPodSeconds: 400 }, gates, clock)).toMatch(
      /pending for 405s/,
    );
  });

  it('one malformed metric blinds neither gate', () => {
    const metrics = { nodeClaimLaunchFailures: -1, oldestPendingPodSince: iso(900) } as never;
    expect(karpenterGateViolation(metrics, gates, clock)).toMatch(/^PodsPendingTooLong/);
    const other = { nodeClaimLaunchFailures: 5, oldestPendingPodSince: 'yesterday' } as never;
    expect(karpenterGateViolation(other, gates, clock)).toMatch(/^NodeClaimLaunchFailures: 5/);
  });

  it('passes at the bound, with the gates off, and without the metrics (an older sidecar)', () => {
    expect(
      karpenterGateViolation(
        { nodeClaimLaunchFailureTimes: [iso(1)], oldestPendingPodSince: iso(300) },
        gates,
        clock,
      ),
    ).toBeUndefined();
    expect(
      karpenterGateViolation(
        { nodeClaimLaunchFailures: 50, oldestPendingPodSince: iso(9000) },
        { maxNodeClaimLaunchFailures: null, maxPendingPodSeconds: null },
        clock,
      ),
    ).toBeUndefined();
    expect(karpenterGateViolation({}, gates, clock)).toBeUndefined();
    expect(karpenterGateViolation(null, gates, clock)).toBeUndefined();
  });
});
