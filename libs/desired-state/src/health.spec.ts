import { describe, expect, it } from '@jest/globals';
import { evaluateHealth, type ReportedStatus } from './health.js';

const now = new Date('2026-11-30T12:00:00Z');
const secondsAgo = (s: number) => new Date(now.getTime() - s * 1000);
const status = (
  over: Partial<ReportedStatus> & { available?: string; degraded?: string } = {},
): ReportedStatus => ({
  observedGeneration: over.observedGeneration ?? 5,
  lastReportAt: over.lastReportAt === undefined ? secondsAgo(1) : over.lastReportAt,
  conditions: over.conditions ?? [
    { type: 'Available', status: over.available ?? 'True' },
    { type: 'Degraded', status: over.degraded ?? 'False' },
    { type: 'Progressing', status: 'False' },
  ],
});

describe('evaluateHealth', () => {
  it('healthy at the target generation or past it', () => {
    expect(evaluateHealth(status(), 5, now, 90)).toBe('healthy');
    expect(evaluateHealth(status({ observedGeneration: 7 }), 5, now, 90)).toBe('healthy');
  });

  it('waits while the generation is older, even when that older state is degraded', () => {
    expect(evaluateHealth(status({ observedGeneration: 4 }), 5, now, 90)).toBe('waiting');
    expect(evaluateHealth(status({ observedGeneration: 4, degraded: 'True' }), 5, now, 90)).toBe(
      'waiting',
    );
  });

  it('degraded at the target generation, whatever Available says', () => {
    expect(evaluateHealth(status({ degraded: 'True' }), 5, now, 90)).toBe('degraded');
    expect(evaluateHealth(status({ degraded: 'True', available: 'False' }), 5, now, 90)).toBe(
      'degraded',
    );
  });

  it('waits while Available is not True (Unknown, False, absent)', () => {
    expect(evaluateHealth(status({ available: 'Unknown' }), 5, now, 90)).toBe('waiting');
    expect(evaluateHealth(status({ available: 'False' }), 5, now, 90)).toBe('waiting');
    expect(evaluateHealth(status({ conditions: [] }), 5, now, 90)).toBe('waiting');
  });

  it('stale without a report, or with one older than the threshold, before anything else', () => {
    expect(evaluateHealth(status({ lastReportAt: null }), 5, now, 90)).toBe('stale');
    expect(evaluateHealth(status({ lastReportAt: secondsAgo(91) }), 5, now, 90)).toBe('stale');
    expect(evaluateHealth(status({ lastReportAt: secondsAgo(90) }), 5, now, 90)).toBe('healthy');
    expect(
      evaluateHealth(status({ lastReportAt: secondsAgo(200), observedGeneration: 1 }), 5, now, 90),
    ).toBe('stale');
  });
});
