const BLOCKS = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'] as const;

/**
 * One line of block characters, one per value, scaled between `min` and `max`. A null value (a
 * step without reports) is a space: a gap in the data must not look like a zero.
 */
export function sparkline(values: readonly (number | null)[], min: number, max: number): string {
  const span = max - min;
  return values
    .map((v) => {
      if (v === null || Number.isNaN(v)) return ' ';
      const level = span > 0 ? Math.round(((v - min) / span) * (BLOCKS.length - 1)) : 0;
      return BLOCKS[Math.min(BLOCKS.length - 1, Math.max(0, level))];
    })
    .join('');
}

/**
 * Averages neighbouring values so the series fits `width` columns; null values are left out of
 * an average, and a bucket of nulls stays null.
 */
export function fit(values: readonly (number | null)[], width: number): (number | null)[] {
  if (values.length <= width) return [...values];
  const out: (number | null)[] = [];
  for (let i = 0; i < width; i++) {
    const bucket = values
      .slice(Math.floor((i * values.length) / width), Math.floor(((i + 1) * values.length) / width))
      .filter((v): v is number => v !== null);
    out.push(bucket.length ? bucket.reduce((a, b) => a + b, 0) / bucket.length : null);
  }
  return out;
}

export interface Series {
  label: string;
  values: readonly (number | null)[];
  /** Fixed scale (shares are 0–1); the data's own range otherwise. */
  scale?: [number, number];
  format: (v: number) => string;
}

/** A labelled sparkline per series with min / avg / max, for `clusters history`. */
export function chart(series: readonly Series[], width: number): string {
  const labelWidth = Math.max(...series.map((s) => s.label.length));
  const columns = Math.max(10, width - labelWidth - 40);
  return series
    .map((s) => {
      const known = s.values.filter((v): v is number => v !== null);
      const [lo, hi] = s.scale ?? [Math.min(...known), Math.max(...known)];
      const line = known.length ? sparkline(fit(s.values, columns), lo, hi) : '(no data)';
      const stats = known.length
        ? `  min ${s.format(Math.min(...known))}  avg ${s.format(known.reduce((a, b) => a + b, 0) / known.length)}  max ${s.format(Math.max(...known))}`
        : '';
      return `${s.label.padEnd(labelWidth)}  ${line}${stats}`;
    })
    .join('\n')
    .concat('\n');
}
