/** The ranges the history charts offer (issue 47): the last day or week. */
export type HistoryRange = '24h' | '7d';

export const RANGE_HOURS: Record<HistoryRange, number> = { '24h': 24, '7d': 168 };

/**
 * The window of a range ending now, on a grid of `step` seconds: `to` rounded up to the step (so
 * the current, partial step is the last), `from` that many steps before. Stable within a step,
 * so a re-render asks the same question.
 */
export function historyWindow(
  range: HistoryRange,
  step: number,
  now = Date.now(),
): { from: string; to: string; step: number; steps: number; fromMs: number } {
  const stepMs = step * 1000;
  const to = Math.ceil(now / stepMs) * stepMs;
  const steps = Math.ceil((RANGE_HOURS[range] * 3600) / step);
  const from = to - steps * stepMs;
  return {
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    step,
    steps,
    fromMs: from,
  };
}

/** Cluster charts: 15-minute steps over a day (raw samples), hours over a week (roll-ups). */
export const CLUSTER_STEP: Record<HistoryRange, number> = { '24h': 900, '7d': 3600 };
