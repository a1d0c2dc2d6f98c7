import { describe, expect, it } from '@jest/globals';
import { karpenterGateViolation, planStages, StrategyDefinition } from './strategy.js';

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

  it('fails a cluster past a bound, naming the gate', () => {
    expect(karpenterGateViolation({ nodeClaimLaunchFailures: 2 }, gates)).toMatch(
      /^NodeClaimLaunchFailures: 2 NodeClaims failed to launch/,
    );
    expect(karpenterGateViolation({ oldestPendingPodSeconds: 301 }, gates)).toMatch(
      /^PodsPendingTooLong: .*301s, more than maxPendingPodSeconds 300/,
    );
  });

  it('passes at the bound, with the gates off, and without the metrics (an older sidecar)', () => {
    expect(
      karpenterGateViolation({ nodeClaimLaunchFailures: 1, oldestPendingPodSeconds: 300 }, gates),
    ).toBeUndefined();
    expect(
      karpenterGateViolation(
        { nodeClaimLaunchFailures: 50, oldestPendingPodSeconds: 9000 },
        { maxNodeClaimLaunchFailures: null, maxPendingPodSeconds: null },
      ),
    ).toBeUndefined();
    expect(karpenterGateViolation({}, gates)).toBeUndefined();
    expect(karpenterGateViolation(null, gates)).toBeUndefined();
  });
});
