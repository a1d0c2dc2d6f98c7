/** A rollout as `rollouts watch` follows it (documents.ts ROLLOUT_DETAIL). */
export interface RolloutProgressView {
  id: string;
  state: string;
  reason: string | null;
  currentWave: number;
  /** WAITING_APPROVAL: the wave whose approval gate holds the rollout. */
  waitingStage?: number | null;
  counts: {
    total: number;
    pending: number;
    applying: number;
    healthy: number;
    failed: number;
    skipped: number;
  };
  waves: {
    index: number;
    state: string;
    clusters: { clusterName: string; state: string; reason: string | null }[];
  }[];
}

export const TERMINAL_ROLLOUT_STATES = ['COMPLETED', 'FAILED', 'ABORTED'] as const;

const ESC = '\u001b';
/** Back to column 0 and erase the line: the bar is redrawn in place on a terminal. */
const CLEAR_LINE = `\r${ESC}[K`;

export function summaryLine(r: RolloutProgressView): string {
  const c = r.counts;
  const parts = [
    `${c.healthy}/${c.total} healthy`,
    `${c.applying} applying`,
    `${c.failed} failed`,
    `${c.pending} pending`,
    ...(c.skipped ? [`${c.skipped} skipped`] : []),
  ];
  return `rollout/${r.id} ${r.state} wave ${r.currentWave + 1}/${r.waves.length}: ${parts.join(', ')}${r.reason ? ` (${r.reason})` : ''}`;
}

/** `[#####.....]`: done clusters (healthy, failed, skipped) over all, `width` cells wide. */
export function bar(done: number, total: number, width: number): string {
  const filled = total > 0 ? Math.round((done / total) * width) : width;
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
}

const clusterStates = (r: RolloutProgressView) =>
  new Map(
    r.waves.flatMap((w) =>
      w.clusters.map((c) => [c.clusterName, { ...c, wave: w.index }] as const),
    ),
  );

/**
 * What to write when the rollout goes from `prev` to `next`: a line per cluster whose state
 * changed (the lasting record), then the overall state — redrawn in place as a bar on a
 * terminal, a plain line (only when it changed) otherwise, so a CI log reads top to bottom.
 */
export class RolloutProgress {
  private prev: RolloutProgressView | undefined;
  private barShown = false;

  constructor(
    private readonly tty: boolean,
    private readonly width = 80,
  ) {}

  update(next: RolloutProgressView): string {
    const before = clusterStates(this.prev ?? { ...next, waves: [] });
    const lines: string[] = [];
    for (const [name, c] of clusterStates(next)) {
      if (before.get(name)?.state === c.state) continue;
      if (!this.prev && c.state === 'PENDING') continue;
      lines.push(
        `cluster/${name} ${c.state} (wave ${c.wave + 1})${c.reason ? `: ${c.reason}` : ''}`,
      );
    }
    const summary = summaryLine(next);
    const summaryChanged = !this.prev || summaryLine(this.prev) !== summary;
    this.prev = next;
    if (!lines.length && !summaryChanged) return '';
    const terminal = (TERMINAL_ROLLOUT_STATES as readonly string[]).includes(next.state);
    if (!this.tty) {
      return [...lines, ...(summaryChanged ? [summary] : [])].map((l) => `${l}\n`).join('');
    }
    const c = next.counts;
    const drawn = `${bar(c.healthy + c.failed + c.skipped, c.total, 20)} ${summary}`.slice(
      0,
      Math.max(20, this.width - 1),
    );
    const out =
      (this.barShown ? CLEAR_LINE : '') +
      lines.map((l) => `${l}\n`).join('') +
      drawn +
      (terminal ? '\n' : '');
    this.barShown = !terminal;
    return out;
  }
}
