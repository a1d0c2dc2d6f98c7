import type { Command } from 'commander';
import { parseIntOption, parseSeconds } from '../args.js';
import { chart } from '../chart.js';
import type { Request } from '../client.js';
import * as gql from '../documents.js';
import { usageError } from '../errors.js';
import { age, print, table, type OutputFormat } from '../format.js';
import { PAGE_SIZE, resolveCluster, type CommandContext, type Page } from './context.js';

export interface HealthPoint {
  at: string;
  samples: number;
  available: number;
  progressing: number;
  degraded: number;
  nodes: number | null;
  vcpus: number | null;
}

export interface CsrDecision {
  csrName: string;
  signerName: string;
  nodeName: string | null;
  decision: string;
  reason: string;
  message: string;
  decidedAt: string;
}

interface AuditEvent {
  at: string;
  actor: string;
  action: string;
  before: unknown;
  after: unknown;
}

interface ReconcileRun {
  generation: number;
  state: string;
  createdAt: string;
  dispatchedAt: string | null;
  finishedAt: string | null;
  error: string | null;
}

const pct = (v: number) => `${Math.round(v * 100)}%`;
const num = (v: number | null) => (v === null ? '' : String(Math.round(v * 10) / 10));

/**
 * The step the API uses for a range (health-history.service.ts): range/200 by default, at most
 * 1000 points, whole hours beyond the 48 h of raw samples. The chart needs it to place points,
 * since the API returns only the steps that had reports.
 */
export function effectiveStep(rangeSeconds: number, requested: number | undefined): number {
  const step = Math.max(
    requested ?? Math.ceil(rangeSeconds / 200),
    Math.ceil(rangeSeconds / 1000),
    1,
  );
  return rangeSeconds > 48 * 3600 ? Math.ceil(step / 3600) * 3600 : step;
}

const stepText = (seconds: number): string =>
  seconds % 3600 === 0
    ? `${seconds / 3600}h`
    : seconds % 60 === 0
      ? `${seconds / 60}m`
      : `${seconds}s`;

/**
 * The history chart and table. Points sit on the step grid from `from`; a step without a point
 * (no reports) is a gap in the chart, never a zero.
 */
export function historyText(
  cluster: string,
  points: readonly HealthPoint[],
  window: { from: Date; to: Date; step: number; since: string },
  width: number,
): string {
  const slots = Math.max(
    1,
    Math.ceil((window.to.getTime() - window.from.getTime()) / 1000 / window.step),
  );
  const grid: (HealthPoint | undefined)[] = Array.from({ length: slots }, () => undefined);
  for (const p of points) {
    const slot = Math.floor((Date.parse(p.at) - window.from.getTime()) / 1000 / window.step);
    grid[Math.min(slots - 1, Math.max(0, slot))] = p;
  }
  const reported = points.filter((p) => p.samples > 0);
  const head = `cluster/${cluster} health, last ${window.since}, step ${stepText(window.step)}: ${slots} steps, ${reported.length} with reports\n`;
  if (!reported.length) return `${head}no reports in this window\n`;
  const values = (pick: (p: HealthPoint) => number | null) =>
    grid.map((p) => (p && p.samples > 0 ? pick(p) : null));
  return [
    head,
    chart(
      [
        { label: 'available', values: values((p) => p.available), scale: [0, 1], format: pct },
        { label: 'progressing', values: values((p) => p.progressing), scale: [0, 1], format: pct },
        { label: 'degraded', values: values((p) => p.degraded), scale: [0, 1], format: pct },
        { label: 'nodes', values: values((p) => p.nodes), format: (v) => num(v) },
        { label: 'vcpus', values: values((p) => p.vcpus), format: (v) => num(v) },
      ],
      width,
    ),
    '\n',
    table(
      ['AT', 'SAMPLES', 'AVAILABLE', 'PROGRESSING', 'DEGRADED', 'NODES', 'VCPUS'],
      reported.map((p) => [
        p.at,
        String(p.samples),
        pct(p.available),
        pct(p.progressing),
        pct(p.degraded),
        num(p.nodes),
        num(p.vcpus),
      ]),
    ),
  ].join('');
}

/** Newest-first pages of a cluster connection, up to `limit` items. */
async function newest<T>(
  request: Request,
  query: string,
  id: string,
  field: string,
  limit: number,
): Promise<T[]> {
  const items: T[] = [];
  let after: string | null = null;
  while (items.length < limit) {
    const data: { cluster: Record<string, Page<T>> } = await request(query, {
      id,
      first: Math.min(PAGE_SIZE, limit - items.length),
      after,
    });
    const page = data.cluster[field]!;
    items.push(...page.nodes);
    if (!page.pageInfo.hasNextPage || !page.pageInfo.endCursor) break;
    after = page.pageInfo.endCursor;
  }
  return items;
}

/** `kfleet clusters history|csr|activity|runs`: what happened on one cluster. */
export function addClusterActivityCommands(clusters: Command, context: CommandContext): void {
  const { io, connect, readOutput } = context;
  const limitOption = (what: string) =>
    [`--limit <n>`, `newest ${what} to show (default 50)`, '50'] as const;

  clusters
    .command('history')
    .description('health over time: a terminal chart and the numbers per step')
    .argument('<cluster>', 'cluster name or ID')
    .option('--since <duration>', 'how far back, e.g. 24h, 7d', '24h')
    .option('--step <duration>', 'one point per step, e.g. 5m (default: the API picks)')
    .addOption(readOutput())
    .action(
      async (
        ref: string,
        opts: { since: string; step?: string; output: OutputFormat },
        cmd: Command,
      ) => {
        const since = parseSeconds(opts.since, '--since');
        const step = opts.step ? parseSeconds(opts.step, '--step') : undefined;
        if (step !== undefined && step > since)
          throw usageError(`--step ${opts.step} is longer than --since ${opts.since}`, '--step');
        const to = io.now();
        const from = new Date(to.getTime() - since * 1000);
        const request = connect(cmd);
        const id = await resolveCluster(request, ref);
        const { cluster } = await request<{ cluster: { name: string; health: HealthPoint[] } }>(
          gql.CLUSTER_HEALTH,
          { id, from: from.toISOString(), to: to.toISOString(), ...(step ? { step } : {}) },
        );
        const points = cluster.health;
        if (opts.output === 'table' || opts.output === 'wide') {
          io.stdout(
            historyText(
              cluster.name,
              points,
              { from, to, step: effectiveStep(since, step), since: opts.since },
              io.columns ?? 100,
            ),
          );
          return;
        }
        io.stdout(
          print(opts.output, points, {
            table: () => '',
            name: (p) => `healthpoint/${p.at}`,
          }),
        );
      },
    );

  clusters
    .command('csr')
    .description("the cluster's CSR approver decisions, newest first")
    .argument('<cluster>', 'cluster name or ID')
    .option(...limitOption('decisions'))
    .addOption(readOutput())
    .action(async (ref: string, opts: { limit: string; output: OutputFormat }, cmd: Command) => {
      const limit = parseIntOption(opts.limit, '--limit', 1);
      const request = connect(cmd);
      const id = await resolveCluster(request, ref);
      const rows = await newest<CsrDecision>(
        request,
        gql.CLUSTER_CSR_DECISIONS,
        id,
        'csrDecisions',
        limit,
      );
      const now = io.now();
      const cells = (d: CsrDecision) => [
        d.csrName,
        d.decision,
        d.reason,
        d.nodeName ?? '<none>',
        `${age(d.decidedAt, now)} ago`,
      ];
      io.stdout(
        print(opts.output, rows, {
          table: (items) =>
            table(['CSR', 'DECISION', 'REASON', 'NODE', 'DECIDED'], items.map(cells)),
          wide: (items) =>
            table(
              ['CSR', 'DECISION', 'REASON', 'NODE', 'DECIDED', 'SIGNER', 'MESSAGE'],
              items.map((d) => [...cells(d), d.signerName, d.message]),
            ),
          name: (d) => `csr/${d.csrName}`,
        }),
      );
    });

  clusters
    .command('activity')
    .description('who changed the cluster and how (the audit trail), newest first')
    .argument('<cluster>', 'cluster name or ID')
    .option(...limitOption('events'))
    .addOption(readOutput())
    .action(async (ref: string, opts: { limit: string; output: OutputFormat }, cmd: Command) => {
      const limit = parseIntOption(opts.limit, '--limit', 1);
      const request = connect(cmd);
      const id = await resolveCluster(request, ref);
      const rows = await newest<AuditEvent>(
        request,
        gql.CLUSTER_AUDIT_EVENTS,
        id,
        'auditEvents',
        limit,
      );
      const now = io.now();
      const cells = (e: AuditEvent) => [e.at, e.actor, e.action, `${age(e.at, now)} ago`];
      io.stdout(
        print(opts.output, rows, {
          table: (items) => table(['AT', 'ACTOR', 'ACTION', 'AGE'], items.map(cells)),
          wide: (items) =>
            table(
              ['AT', 'ACTOR', 'ACTION', 'AGE', 'BEFORE', 'AFTER'],
              items.map((e) => [...cells(e), JSON.stringify(e.before), JSON.stringify(e.after)]),
            ),
          name: (e) => `auditevent/${e.at}`,
        }),
      );
    });

  clusters
    .command('runs')
    .description('reconcile runs (one per desired generation sent to the sidecar), newest first')
    .argument('<cluster>', 'cluster name or ID')
    .option(...limitOption('runs'))
    .addOption(readOutput())
    .action(async (ref: string, opts: { limit: string; output: OutputFormat }, cmd: Command) => {
      const limit = parseIntOption(opts.limit, '--limit', 1);
      const request = connect(cmd);
      const id = await resolveCluster(request, ref);
      const rows = await newest<ReconcileRun>(
        request,
        gql.CLUSTER_RECONCILE_RUNS,
        id,
        'reconcileRuns',
        limit,
      );
      const now = io.now();
      const cells = (r: ReconcileRun) => [
        String(r.generation),
        r.state,
        age(r.createdAt, now),
        r.error ?? '',
      ];
      io.stdout(
        print(opts.output, rows, {
          table: (items) => table(['GENERATION', 'STATE', 'AGE', 'ERROR'], items.map(cells)),
          wide: (items) =>
            table(
              ['GENERATION', 'STATE', 'AGE', 'ERROR', 'DISPATCHED', 'FINISHED'],
              items.map((r) => [...cells(r), r.dispatchedAt ?? '', r.finishedAt ?? '']),
            ),
          name: (r) => `reconcilerun/${r.generation}`,
        }),
      );
    });
}
