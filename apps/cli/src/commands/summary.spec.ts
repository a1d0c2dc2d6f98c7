import { describe, expect, it } from '@jest/globals';
import { fleetHistoryText, summaryText, type FleetSummary } from './summary.js';

describe('kfleet history', () => {
  it('draws the fleet by state per hour, an hour without data a gap, never a zero', () => {
    const gap = { healthy: null, progressing: null, degraded: null, stale: null };
    const text = fleetHistoryText(
      [
        { at: '2026-12-05T00:00:00.000Z', healthy: 8, progressing: 1, degraded: 1, stale: 0 },
        { at: '2026-12-05T01:00:00.000Z', ...gap },
        { at: '2026-12-05T02:00:00.000Z', healthy: 10, progressing: 0, degraded: 0, stale: 0 },
      ],
      '3h',
      80,
    );
    const lines = text.split('\n');
    expect(lines[0]).toBe('fleet health, last 3h, hourly: 3 hours, 2 with data');
    // The sparkline's middle column is a space (the gap), not the lowest block (a zero).
    const healthy = lines.find((l) => l.startsWith('healthy'))!;
    expect(healthy).toMatch(/^healthy\s+▇ █ /);
    const degraded = lines.find((l) => l.startsWith('degraded'))!;
    expect(degraded).toMatch(/^degraded\s+▂ ▁/);
    expect(text).toMatch(/2026-12-05T01:00:00.000Z\s+<no data>/);
    expect(fleetHistoryText([{ at: '2026-12-05T00:00:00.000Z', ...gap }], '1h', 80)).toMatch(
      /no health history in this window/,
    );
  });

  it('prints the single health states apart from generation sync in the summary', () => {
    const s: FleetSummary = {
      clusters: 3,
      inSync: 3,
      stale: 0,
      paused: 0,
      karpenterEnabled: 3,
      clusterAutoscalerDisabled: 0,
      byHealth: { healthy: 2, progressing: 0, degraded: 1, stale: 0, paused: 0 },
      byPlatform: [],
      byTopology: [],
      byCondition: [],
    };
    const lines = summaryText(s).split('\n');
    const [states] = lines;
    const sync = lines.find((l) => l.startsWith('KARPENTER'));
    expect(states).toMatch(/^CLUSTERS\s+HEALTHY\s+PROGRESSING\s+DEGRADED\s+STALE\s+PAUSED$/);
    expect(summaryText(s).split('\n')[1]).toMatch(/^3\s+2\s+0\s+1\s+0\s+0$/);
    expect(sync).toMatch(/KARPENTER\s+CAS-DISABLED\s+LATEST-GENERATION-APPLIED/);
    expect(summaryText(s)).toMatch(/3\s+0\s+3 of 3/);
  });
});
