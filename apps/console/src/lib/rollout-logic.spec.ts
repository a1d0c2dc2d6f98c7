import { describe, expect, it } from '@jest/globals';
import { EXPIRY_CHOICES, expiresAt, parseLabels, tokenStatus } from './admin-forms.js';
import {
  DEFAULT_WAVE_STEPS,
  EMPTY_CHANGE,
  describeChange,
  formatStage,
  formatWaveSteps,
  healthGates,
  parseWaveSteps,
  planNamedStages,
  rolloutChange,
  splitIntoWaves,
  waveSizes,
} from './rollout-plan.js';
import { rolloutActions, rolloutStateText, waitingForApproval } from './rollout-state.js';
import { formatRolloutPicks, parseRolloutPicks } from './url-state.js';

describe("a named strategy's preview", () => {
  const stage = (s: object) => ({ minHealthySeconds: 60, pauseSeconds: 0, approval: false, ...s });

  it('gives each wave its stage gates, and the rest a last wave with the first stage health time', () => {
    expect(
      planNamedStages(10, [
        stage({ count: 1, minHealthySeconds: 0, approval: true, selector: null, percent: null }),
        stage({ percent: 50, pauseSeconds: 30, selector: null, count: null }),
      ]),
    ).toEqual([
      { size: 1, minHealthySeconds: 0, pauseSeconds: 0, approval: true },
      { size: 4, minHealthySeconds: 60, pauseSeconds: 30, approval: false },
      { size: 5, minHealthySeconds: 0, pauseSeconds: 0, approval: false },
    ]);
  });

  it('moves the pause and gate of a stage that adds nobody to the wave before it', () => {
    // 10 % of 3 clusters is the canary already: its approval holds after the canary.
    expect(
      planNamedStages(3, [
        stage({ count: 1, pauseSeconds: 5 }),
        stage({ percent: 10, pauseSeconds: 60, approval: true }),
        stage({ percent: 100, minHealthySeconds: 120 }),
      ]),
    ).toEqual([
      { size: 1, minHealthySeconds: 60, pauseSeconds: 60, approval: true },
      { size: 2, minHealthySeconds: 120, pauseSeconds: 0, approval: false },
    ]);
    expect(planNamedStages(0, [stage({ count: 1 })])).toEqual([]);
  });

  it('leaves a selector stage to the API: its clusters are chosen by label at start', () => {
    expect(planNamedStages(5, [stage({ selector: 'canary=true' }), stage({ percent: 100 })])).toBe(
      null,
    );
  });

  it('names the health gates it sets beside Degraded or Stale', () => {
    expect(healthGates({ maxPendingPodSeconds: null, maxNodeClaimLaunchFailures: null })).toBe(
      'Degraded or Stale',
    );
    expect(healthGates({ maxPendingPodSeconds: 900, maxNodeClaimLaunchFailures: 0 })).toBe(
      'Degraded or Stale; unschedulable pod pending over 900 s; over 0 NodeClaim launch failures',
    );
  });
});

describe('the rollout preview plan', () => {
  it('plans the documented example: 6 clusters → waves of 1, 2, 3 (10 % adds nobody)', () => {
    expect(waveSizes(6, DEFAULT_WAVE_STEPS)).toEqual([1, 2, 3]);
    expect(splitIntoWaves(['a', 'b', 'c', 'd', 'e', 'f'], [1, 2, 3])).toEqual([
      ['a'],
      ['b', 'c'],
      ['d', 'e', 'f'],
    ]);
  });

  it('puts what the steps leave over into a last wave, and plans nothing for no cluster', () => {
    expect(waveSizes(10, [{ count: 2 }, { percent: 50 }])).toEqual([2, 3, 5]);
    expect(waveSizes(0, DEFAULT_WAVE_STEPS)).toEqual([]);
  });

  it('reads and writes the steps as an SRE types them', () => {
    expect(parseWaveSteps(' 1, 10%,50 %, 100%')).toEqual({ steps: DEFAULT_WAVE_STEPS });
    expect(formatWaveSteps(DEFAULT_WAVE_STEPS)).toBe('1, 10%, 50%, 100%');
    // A named strategy's stages, as the API copies them into the rollout (unused keys null).
    expect(
      [
        { selector: 'canary=true', percent: null, count: null },
        { selector: null, percent: 50, count: null },
        { selector: null, percent: null, count: 3 },
      ].map(formatStage),
    ).toEqual(['selector canary=true', '50%', '3']);
    expect(parseWaveSteps('1, ten')).toEqual({
      error: '"ten" is neither a count (5) nor a percentage (10%)',
    });
    expect(parseWaveSteps(' , ')).toHaveProperty('error');
  });
});

describe('the rollout change', () => {
  it('leaves out what is left at "no change"', () => {
    expect(rolloutChange(EMPTY_CHANGE)).toEqual({});
    expect(
      rolloutChange({
        karpenter: 'enable',
        clusterAutoscalerMode: 'DISABLE',
        logLevel: '',
        karpenterVersion: ' 1.14.1 ',
      }),
    ).toEqual({ enabled: true, clusterAutoscalerMode: 'DISABLE', karpenterVersion: '1.14.1' });
  });

  it('describes a stored change in one line', () => {
    expect(describeChange({ enabled: true, clusterAutoscalerMode: 'DISABLE' })).toBe(
      'enable Karpenter, Cluster Autoscaler DISABLE',
    );
    expect(describeChange({ upsertNodePool: { name: 'general', spec: {} } })).toBe(
      'NodePool general (create or replace)',
    );
    expect(describeChange({})).toBe('no change');
    expect(describeChange({ profile: 'prod-base', revision: 2 })).toBe('profile prod-base@2');
  });

  it('offers only the transitions the API allows', () => {
    const none = { pause: false, resume: false, abort: false, approve: false };
    expect(rolloutActions('RUNNING')).toEqual({ ...none, pause: true, abort: true });
    expect(rolloutActions('WAITING_APPROVAL')).toEqual({
      pause: true,
      resume: false,
      abort: true,
      approve: true,
    });
    expect(rolloutActions('PAUSED')).toEqual({ ...none, resume: true, abort: true });
    expect(rolloutActions('FAILED')).toEqual({ ...none, resume: true, abort: true });
    expect(rolloutActions('COMPLETED')).toEqual(none);
    expect(rolloutActions('ABORTED')).toEqual(none);
  });

  it('names the wave an approval gate holds back, counting waves from 1', () => {
    // waitingStage 0: wave 1 succeeded, wave 2 waits.
    expect(waitingForApproval(0)).toBe('Waiting for approval before wave 2');
    expect(rolloutStateText('WAITING_APPROVAL')).toBe('WAITING APPROVAL');
    expect(rolloutStateText('RUNNING')).toBe('RUNNING');
  });
});

describe('picked rows in the rollout form URL', () => {
  it('round-trips the selector and the picked clusters', () => {
    const picked = new Map([
      ['Q2x1c3Rlcjox', 'prod-east'],
      ['Q2x1c3Rlcjoy', 'prod-west'],
    ]);
    expect(parseRolloutPicks(formatRolloutPicks('env=prod', picked))).toEqual({
      selector: 'env=prod',
      clusters: [
        { id: 'Q2x1c3Rlcjox', name: 'prod-east' },
        { id: 'Q2x1c3Rlcjoy', name: 'prod-west' },
      ],
    });
  });

  it('drops entries that are not an ID and a cluster name', () => {
    expect(parseRolloutPicks('?clusters=abc:Bad_Name,:x,ok:good-name').clusters).toEqual([
      { id: 'ok', name: 'good-name' },
    ]);
    expect(parseRolloutPicks('')).toEqual({ selector: '', clusters: [] });
  });
});

describe('administration forms', () => {
  it('splits labels and names the entry it cannot split', () => {
    expect(parseLabels(' env=prod, tier = gold ,')).toEqual({
      labels: { env: 'prod', tier: 'gold' },
    });
    expect(parseLabels('env')).toEqual({ error: '"env" is not key=value' });
    expect(parseLabels('a=1,a=2')).toEqual({ error: 'label a is given twice' });
  });

  it('turns an expiry choice into a time, or none', () => {
    const now = new Date('2026-12-01T00:00:00Z');
    expect(expiresAt('7', now)).toBe('2026-12-08T00:00:00.000Z');
    expect(expiresAt('never', now)).toBeNull();
    expect(EXPIRY_CHOICES.map((c) => c.value)).toContain('30');
  });

  it('tells a revoked token from an expired one', () => {
    const now = new Date('2026-12-01T00:00:00Z');
    expect(tokenStatus({ revokedAt: null, expiresAt: null }, now)).toBe('Active');
    expect(tokenStatus({ revokedAt: null, expiresAt: '2026-11-30T00:00:00Z' }, now)).toBe(
      'Expired',
    );
    expect(tokenStatus({ revokedAt: '2026-11-29T00:00:00Z', expiresAt: null }, now)).toBe(
      'Revoked',
    );
  });
});
