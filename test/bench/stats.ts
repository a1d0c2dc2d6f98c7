/** Percentiles over measured samples (nearest-rank), in the samples' unit. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export const median = (samples: readonly number[]): number => percentile(samples, 50);

/** Runs `fn` `runs` times after `warmup` unmeasured runs; returns milliseconds per run. */
export async function timeRuns(
  fn: () => Promise<unknown>,
  runs: number,
  warmup = 10,
): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    samples.push(performance.now() - start);
  }
  return samples;
}

export const ms = (value: number): string => `${value.toFixed(2)} ms`;
