import type { Command } from 'commander';
import {
  parseCasMode,
  parseDuration,
  parseFeatureGates,
  parseLogLevel,
  parseNodePoolDocument,
} from '../args.js';
import * as gql from '../documents.js';
import { CliError, usageError } from '../errors.js';
import { print, type OutputFormat, type Printer } from '../format.js';
import type { Request } from '../client.js';
import { ack, collect, resolveCluster, type ClusterAck, type CommandContext } from './context.js';

interface PlannedObject {
  kind: string;
  namespace: string | null;
  name: string;
  action: 'CREATED' | 'CHANGED' | 'DELETED' | 'UNCHANGED';
  moreFields: number;
  diff: { path: string; before: unknown; after: unknown }[];
  errors: { field: string; message: string; reason: string | null }[];
}

interface PlanCluster {
  clusterName: string;
  generation: number;
  state: string;
  reason: string | null;
  message: string | null;
  objects: PlannedObject[];
}

export interface PlanView {
  id: string;
  expiresAt: string;
  expired: boolean;
  appliedAt: string | null;
  rolloutId?: string | null;
  counts: {
    total: number;
    pending: number;
    planned: number;
    notPlanned: number;
    failed: number;
    invalid: number;
    created: number;
    changed: number;
    deleted: number;
    unchanged: number;
  };
  clusters?: PlanCluster[];
}

const SIGN = { CREATED: '+', CHANGED: '~', DELETED: '-', UNCHANGED: '=' } as const;
const json = (v: unknown) => (v === null || v === undefined ? '(absent)' : JSON.stringify(v));
const objectName = (o: PlannedObject) =>
  `${o.kind}/${o.namespace ? `${o.namespace}/` : ''}${o.name}`;

/** Per cluster its state, then each object that would change with its fields, like a diff. */
export function planText(plan: PlanView, wide = false): string {
  const c = plan.counts;
  const lines = [
    `plan ${plan.id}: ${c.total} cluster(s): ${c.planned} planned, ${c.notPlanned} not planned, ${c.failed} failed, ${c.pending} pending; ` +
      `objects ${c.created} created, ${c.changed} changed, ${c.deleted} deleted, ${c.unchanged} unchanged`,
  ];
  for (const cluster of plan.clusters ?? []) {
    const why = cluster.reason
      ? ` ${cluster.reason}${cluster.message ? `: ${cluster.message}` : ''}`
      : '';
    lines.push(
      `cluster/${cluster.clusterName} ${cluster.state} (generation ${cluster.generation})${why}`,
    );
    let unchanged = 0;
    for (const o of cluster.objects) {
      if (o.action === 'UNCHANGED' && !wide && o.errors.length === 0) {
        unchanged++;
        continue;
      }
      lines.push(`  ${SIGN[o.action]} ${objectName(o)}`);
      if (o.action !== 'CREATED' || wide)
        for (const d of o.diff)
          lines.push(`      ${d.path}: ${json(d.before)} -> ${json(d.after)}`);
      if (o.moreFields) lines.push(`      (+${o.moreFields} more fields)`);
      for (const e of o.errors) lines.push(`      ! ${e.field ? `${e.field}: ` : ''}${e.message}`);
    }
    if (unchanged) lines.push(`  = ${unchanged} unchanged`);
  }
  if (plan.appliedAt) lines.push(`applied at ${plan.appliedAt}`);
  if (plan.rolloutId) lines.push(`rolled out by rollout/${plan.rolloutId}`);
  else if (plan.expired) lines.push(`expired at ${plan.expiresAt}: plan again to apply`);
  else lines.push(`apply before ${plan.expiresAt} with: kfleet plan apply ${plan.id}`);
  return `${lines.join('\n')}\n`;
}

const planPrinter: Printer<PlanView> = {
  table: (plans) => plans.map((p) => planText(p)).join(''),
  wide: (plans) => plans.map((p) => planText(p, true)).join(''),
  name: (p) => `plan/${p.id}`,
};

/** The plan with every cluster (the API pages them, 100 at a time). */
async function readPlan(request: Request, id: string): Promise<PlanView> {
  let after: string | null = null;
  const clusters: PlanCluster[] = [];
  for (;;) {
    const response: {
      changePlan: Omit<PlanView, 'clusters'> & {
        clusters: {
          nodes: PlanCluster[];
          pageInfo: { hasNextPage: boolean; endCursor: string | null };
        };
      };
    } = await request(gql.GET_CHANGE_PLAN, { id, first: 100, after });
    const { clusters: page, ...head } = response.changePlan;
    clusters.push(...page.nodes);
    if (!page.pageInfo.hasNextPage || !page.pageInfo.endCursor) return { ...head, clusters };
    after = page.pageInfo.endCursor;
  }
}

/** `kfleet plan`, `kfleet plan show <id>`, `kfleet plan apply <id>`. */
export function addPlanCommands(
  program: Command,
  { io, connect, readOutput }: CommandContext,
): void {
  const plan = program
    .command('plan')
    .description(
      'plan a change on a cluster or a selector: each sidecar dry-runs it on its API server and reports, per object, what would change; nothing is written',
    )
    .argument('[cluster]', 'cluster name or ID (or --selector)')
    .option('-l, --selector <selector>', 'label selector, e.g. "env=prod"')
    .option('--enable', 'enable Karpenter')
    .option('--disable', 'disable Karpenter')
    .option('--cas <mode>', 'Cluster Autoscaler: disable, keep or migrate')
    .option('--log-level <level>', 'debug, info or error')
    .option(
      '--feature-gate <Name=bool>',
      "feature gate, merged over the cluster's current ones (repeatable; one cluster only)",
      collect,
    )
    .option('--web-identity-role <arn>', 'IAM role ARN the operand assumes (Manual/STS)')
    .option('--instance-types <types>', 'CAPI: comma-separated instance types')
    .option(
      '-f, --filename <file>',
      'a NodePool (YAML or JSON, "-" for stdin) to create or replace',
    )
    .option('--name <name>', 'with -f: the NodePool name (for a bare spec)')
    .option('--delete-nodepool <name>', 'a NodePool to delete')
    .option('--no-wait', 'print the plan as created, without waiting for the clusters to answer')
    .option('--timeout <duration>', 'how long to wait for every cluster to answer (exit 6)', '2m')
    .addOption(readOutput())
    .action(
      async (
        ref: string | undefined,
        opts: {
          selector?: string;
          enable?: boolean;
          disable?: boolean;
          cas?: string;
          logLevel?: string;
          featureGate?: string[];
          webIdentityRole?: string;
          instanceTypes?: string;
          filename?: string;
          name?: string;
          deleteNodepool?: string;
          wait: boolean;
          timeout: string;
          output: OutputFormat;
        },
        cmd: Command,
      ) => {
        if ((ref === undefined) === (opts.selector === undefined))
          throw usageError('give a cluster or --selector, not both', '--selector');
        if (opts.enable && opts.disable)
          throw usageError('--enable and --disable exclude each other', '--disable');
        if (opts.featureGate && opts.selector)
          throw usageError(
            "--feature-gate merges over one cluster's gates; with --selector set the whole map through rollouts",
            '--feature-gate',
          );
        const timeoutMs = parseDuration(opts.timeout, '--timeout');
        const change: Record<string, unknown> = {};
        if (opts.enable || opts.disable) change.enabled = opts.enable === true;
        if (opts.cas) change.clusterAutoscalerMode = parseCasMode(opts.cas);
        if (opts.logLevel) change.logLevel = parseLogLevel(opts.logLevel);
        if (opts.webIdentityRole) change.webIdentityRoleArn = opts.webIdentityRole;
        if (opts.instanceTypes !== undefined)
          change.allowedInstanceTypes = opts.instanceTypes
            .split(',')
            .map((t) => t.trim())
            .filter(Boolean);
        const input: Record<string, unknown> = {};
        if (opts.filename) {
          let text: string;
          try {
            text = await io.readFile(opts.filename);
          } catch (err) {
            throw usageError(`cannot read ${opts.filename}: ${(err as Error).message}`, '-f');
          }
          const pool = parseNodePoolDocument(text, opts.name);
          input.upsertNodePool = { name: pool.name, spec: pool.spec };
        }
        if (opts.deleteNodepool) input.deleteNodePool = opts.deleteNodepool;
        const request = connect(cmd);
        if (ref !== undefined) {
          input.clusterId = await resolveCluster(request, ref);
          if (opts.featureGate) {
            const { cluster } = await request<{
              cluster: { karpenter: { featureGates: Record<string, boolean> } };
            }>(gql.CLUSTER_LABELS_AND_GATES, { id: input.clusterId });
            change.featureGates = {
              ...cluster.karpenter.featureGates,
              ...parseFeatureGates(opts.featureGate),
            };
          }
        } else input.labelSelector = opts.selector;
        if (Object.keys(change).length) input.change = change;
        const { planChange: created } = await request<{ planChange: PlanView }>(gql.PLAN_CHANGE, {
          input,
        });
        let shown = await readPlan(request, created.id);
        if (opts.wait) {
          const until = Date.now() + timeoutMs;
          while (shown.counts.pending > 0 && Date.now() < until) {
            await new Promise((r) => setTimeout(r, 250));
            shown = await readPlan(request, created.id);
          }
        }
        io.stdout(print(opts.output, shown, planPrinter));
        if (opts.wait && shown.counts.pending > 0)
          throw new CliError(
            `plan ${shown.id}: ${shown.counts.pending} cluster(s) did not answer within ${opts.timeout}; kfleet plan show ${shown.id} reads it later`,
            'TIMEOUT',
          );
      },
    );

  plan
    .command('show')
    .description('a plan: per cluster its state, and the objects that would change, field by field')
    .argument('<id>', 'plan ID')
    .addOption(readOutput())
    .action(async (id: string, opts: { output: OutputFormat }, cmd: Command) => {
      // Commander gives `-o` to the parent `plan` (it has one too) wherever it is written.
      const parent = cmd.parent;
      const output =
        parent?.getOptionValueSource('output') === 'cli'
          ? parent.opts<{ output: OutputFormat }>().output
          : opts.output;
      io.stdout(print(output, await readPlan(connect(cmd), id), planPrinter));
    });

  plan
    .command('apply')
    .description(
      "apply a plan's change to its PLANNED clusters; refused (CONFLICT) if one moved since, or the plan expired",
    )
    .argument('<id>', 'plan ID')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const { applyPlan } = await connect(cmd)<{ applyPlan: ClusterAck[] }>(gql.APPLY_PLAN, {
        id,
      });
      io.stdout(applyPlan.map((c) => ack(c, `plan ${id} applied`)).join(''));
    });
}
