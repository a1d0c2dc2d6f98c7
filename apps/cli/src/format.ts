import { stringify } from 'yaml';

/** Aligned columns, kubectl style: upper-case header, two spaces between columns. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n') + '\n';
}

/** kubectl's age: the largest one or two units (`45s`, `3m12s`, `5h`, `12d`, `2y40d`). */
export function age(since: string | Date | null | undefined, now: Date = new Date()): string {
  if (!since) return '<none>';
  const seconds = Math.max(0, Math.floor((now.getTime() - new Date(since).getTime()) / 1000));
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return `${minutes}m${seconds % 60 ? `${seconds % 60}s` : ''}`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return `${hours}h${minutes % 60 ? `${minutes % 60}m` : ''}`;
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (days < 365 * 2) return `${days}d`;
  const years = Math.floor(days / 365);
  return `${years}y${days % 365 ? `${days % 365}d` : ''}`;
}

export interface ClusterRow {
  name: string;
  platform: string;
  region: string;
  createdAt: string;
  inSync: boolean;
  karpenter: { enabled: boolean; paused: boolean; generation: number };
  status: { observedGeneration: number; stale: boolean };
}

const karpenterState = (k: ClusterRow['karpenter']): string =>
  `${k.enabled ? 'Enabled' : 'Disabled'}${k.paused ? ',Paused' : ''}`;

export const CLUSTER_COLUMNS = [
  'NAME',
  'PLATFORM',
  'REGION',
  'KARPENTER',
  'GEN',
  'OBSERVED',
  'IN-SYNC',
  'STALE',
  'AGE',
] as const;

export function clusterTable(clusters: readonly ClusterRow[], now = new Date()): string {
  return table(
    CLUSTER_COLUMNS,
    clusters.map((c) => [
      c.name,
      c.platform,
      c.region,
      karpenterState(c.karpenter),
      String(c.karpenter.generation),
      String(c.status.observedGeneration),
      c.inSync ? 'True' : 'False',
      c.status.stale ? 'True' : 'False',
      age(c.createdAt, now),
    ]),
  );
}

export type OutputFormat = 'table' | 'json' | 'yaml';

export function render(value: unknown, format: 'json' | 'yaml'): string {
  return format === 'json' ? `${JSON.stringify(value, null, 2)}\n` : stringify(value);
}

/** `k=v,k2=v2`, kubectl's label column. */
export const labelList = (labels: Record<string, unknown> | null | undefined): string =>
  Object.entries(labels ?? {})
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(',') || '<none>';
