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
  topology?: string;
  createdAt: string;
  labels?: Record<string, unknown>;
  inSync: boolean;
  /** The one health state (Cluster.healthState): PAUSED, STALE, DEGRADED, PROGRESSING or HEALTHY. */
  healthState?: string;
  karpenter: {
    enabled: boolean;
    paused: boolean;
    generation: number;
    clusterAutoscalerMode?: string;
  };
  status: { observedGeneration: number; stale: boolean; lastReportAt?: string | null };
}

const karpenterState = (k: ClusterRow['karpenter']): string =>
  `${k.enabled ? 'Enabled' : 'Disabled'}${k.paused ? ',Paused' : ''}`;

export const CLUSTER_COLUMNS = [
  'NAME',
  'PLATFORM',
  'REGION',
  'KARPENTER',
  'HEALTH',
  'GEN',
  'OBSERVED',
  'AGE',
] as const;

/** PAUSED → Paused, as the console words it. */
const healthWord = (state: string | undefined): string =>
  state ? state.charAt(0) + state.slice(1).toLowerCase() : '<unknown>';

const clusterCells = (c: ClusterRow, now: Date): string[] => [
  c.name,
  c.platform,
  c.region,
  karpenterState(c.karpenter),
  healthWord(c.healthState),
  String(c.karpenter.generation),
  String(c.status.observedGeneration),
  age(c.createdAt, now),
];

export function clusterTable(clusters: readonly ClusterRow[], now = new Date()): string {
  return table(
    CLUSTER_COLUMNS,
    clusters.map((c) => clusterCells(c, now)),
  );
}

export const CLUSTER_WIDE_COLUMNS = [
  ...CLUSTER_COLUMNS,
  'TOPOLOGY',
  'CAS',
  'LAST-REPORT',
  'LABELS',
] as const;

/** `-o wide`: the table plus topology, Cluster Autoscaler mode, last report and labels. */
export function clusterWideTable(clusters: readonly ClusterRow[], now = new Date()): string {
  return table(
    CLUSTER_WIDE_COLUMNS,
    clusters.map((c) => [
      ...clusterCells(c, now),
      c.topology ?? '',
      c.karpenter.clusterAutoscalerMode ?? '',
      c.status.lastReportAt ? `${age(c.status.lastReportAt, now)} ago` : '<never>',
      labelList(c.labels),
    ]),
  );
}

export const clusterPrinter = (now: Date): Printer<ClusterRow> => ({
  table: (items) => clusterTable(items, now),
  wide: (items) => clusterWideTable(items, now),
  name: (c) => `cluster/${c.name}`,
});

/** What every read accepts with -o, as kubectl does. */
export const OUTPUT_FORMATS = ['table', 'wide', 'json', 'yaml', 'name'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export function render(value: unknown, format: 'json' | 'yaml'): string {
  return format === 'json' ? `${JSON.stringify(value, null, 2)}\n` : stringify(value);
}

/** How one kind of read prints itself; json and yaml are always the API's own shape. */
export interface Printer<T> {
  table(items: readonly T[]): string;
  /** More columns; the table when a kind has nothing more worth a column. */
  wide?(items: readonly T[]): string;
  /** `kind/name`, one a line, for `xargs`. */
  name(item: T): string;
}

/**
 * Prints `value` (one object or a list) in `format`. JSON and YAML print the value exactly as
 * the API returned it, so scripts can rely on the schema's field names.
 */
export function print<T>(
  format: OutputFormat,
  value: T | readonly T[],
  printer: Printer<T>,
): string {
  if (format === 'json' || format === 'yaml') return render(value, format);
  const items: readonly T[] = Array.isArray(value) ? (value as readonly T[]) : [value as T];
  if (format === 'name') return items.map((i) => `${printer.name(i)}\n`).join('');
  if (format === 'wide' && printer.wide) return printer.wide(items);
  return printer.table(items);
}

/** `k=v,k2=v2`, kubectl's label column. */
export const labelList = (labels: Record<string, unknown> | null | undefined): string =>
  Object.entries(labels ?? {})
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(',') || '<none>';
