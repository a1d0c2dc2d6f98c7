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

/** The history chart and table: every point with reports; empty steps only draw as gaps. */
export function historyText(
  cluster: string,
  points: readonly HealthPoint[],
  window: { since: string; step: string },
  width: number,
): string {
  const reported = points.filter((p) => p.samples > 0);
  const head = `cluster/${cluster} health, last ${window.since}, step ${window.step}: ${points.length} steps, ${reported.length} with reports\n`;
  if (!reported.length) return `${head}no reports in this window\n`;
  const values = (pick: (p: HealthPoint) => number | null) =>
    points.map((p) => (p.samples > 0 ? pick(p) : null));
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
          const stepText =
            opts.step ??
            (points.length > 1
              ? `${Math.round((Date.parse(points[1]!.at) - Date.parse(points[0]!.at)) / 1000)}s`
              : 'auto');
          io.stdout(historyText(cluster.name, points, { since: opts.since, step: stepText }, 100));
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
