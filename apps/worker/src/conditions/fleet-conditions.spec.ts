import { describe, expect, it } from '@jest/globals';
import { CONTRACT_VERSION, type Condition } from '@fleet/contracts';
import { conditionChanges, conditionsAfterReport, withCondition } from './fleet-conditions.js';

const c = (type: string, status: Condition['status'], reason: string): Condition => ({
  type,
  status,
  reason,
  message: `${type} ${reason}`,
  lastTransitionTime: '2026-01-01T00:00:00.000Z',
});
const at = '2026-01-01T01:00:00.000Z';

describe('fleet-side conditions', () => {
  it('a report clears Stale and keeps the change visible as a transition', () => {
    const before = [c('Available', 'True', 'AsExpected'), c('Stale', 'True', 'NoRecentReports')];
    const after = conditionsAfterReport(before, [c('Available', 'True', 'AsExpected')], {
      at,
      advancedGeneration: false,
    });
    expect(after).toContainEqual(
      expect.objectContaining({ type: 'Stale', status: 'False', reason: 'ReportsResumed' }),
    );
    expect(conditionChanges(before, after, at)).toEqual([
      expect.objectContaining({
        type: 'Stale',
        fromStatus: 'True',
        fromReason: 'NoRecentReports',
        toStatus: 'False',
        toReason: 'ReportsResumed',
      }),
    ]);
  });

  it('a sidecar cannot set fleet-side conditions, and OrderNotTaken clears only when the generation advances', () => {
    const before = [c('OrderNotTaken', 'True', 'NotAppliedInTime')];
    const reported = [c('Stale', 'False', 'Forged'), c('Degraded', 'False', 'AsExpected')];
    const kept = conditionsAfterReport(before, reported, { at, advancedGeneration: false });
    expect(kept.find((x) => x.type === 'Stale')).toBeUndefined();
    expect(kept).toContainEqual(before[0]);
    const cleared = conditionsAfterReport(before, reported, { at, advancedGeneration: true });
    expect(cleared).toContainEqual(
      expect.objectContaining({ type: 'OrderNotTaken', status: 'False', reason: 'OrderTaken' }),
    );
  });

  it('SidecarOutdated clears only with a report of the current contract', () => {
    const before = [c('SidecarOutdated', 'True', 'ContractTooOld')];
    const old = conditionsAfterReport(before, [], { at, advancedGeneration: false });
    expect(old).toEqual(before);
    const current = conditionsAfterReport(before, [], {
      at,
      advancedGeneration: false,
      contractVersion: CONTRACT_VERSION,
    });
    expect(current).toEqual([
      expect.objectContaining({
        type: 'SidecarOutdated',
        status: 'False',
        reason: 'ContractSupported',
      }),
    ]);
  });

  it('a message-only change is not a transition and keeps lastTransitionTime', () => {
    const before = [c('Stale', 'True', 'NoRecentReports')];
    const after = withCondition(
      before,
      { type: 'Stale', status: 'True', reason: 'NoRecentReports', message: 'still silent' },
      at,
    );
    expect(after[0]?.lastTransitionTime).toBe(before[0]?.lastTransitionTime);
    expect(conditionChanges(before, after, at)).toEqual([]);
  });
});
