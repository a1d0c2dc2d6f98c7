import type { Command } from 'commander';
import { parseIntOption } from '../args.js';
import * as gql from '../documents.js';
import { CliError } from '../errors.js';
import { print, table, type OutputFormat, type Printer } from '../format.js';
import { ack, resolveCluster, type ClusterAck, type CommandContext } from './context.js';

export interface MigrationPlanResult {
  clusterId: string;
  reason: string | null;
  generation: number;
  plan: {
    computedAt: string;
    observedGeneration: number;
    nodePools: {
      name: string;
      spec: Record<string, unknown>;
      replaces: string[];
      explanations: string[];
    }[];
    nodeClassOverrides: Record<string, unknown>;
    nodeClassExplanations: string[];
    notExpressible: { object: string; what: string; reason: string }[];
    explanations: string[];
  } | null;
}

type Requirement = { key: string; values?: string[] };
const requirement = (spec: Record<string, unknown>, key: string): string => {
  const template = spec.template as { spec?: { requirements?: Requirement[] } } | undefined;
  return template?.spec?.requirements?.find((r) => r.key === key)?.values?.join(',') ?? '*';
};
const limits = (spec: Record<string, unknown>) =>
  Object.entries((spec.limits as Record<string, string> | undefined) ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${v}`)
    .join(',') || '-';

/**
 * The plan in three parts: the NodePools (one line each), every explanation, then what the
 * Cluster Autoscaler does that no NodePool can say. `wide` adds the groups each NodePool replaces.
 */
function planText(r: MigrationPlanResult, wide: boolean): string {
  const plan = r.plan;
  if (!plan) return `no migration plan: ${r.reason ?? 'none reported'}\n`;
  const out: string[] = [];
  out.push(
    plan.nodePools.length === 0
      ? 'no NodePool proposed\n'
      : table(
          [
            'NODEPOOL',
            'INSTANCE TYPES',
            'ZONES',
            'CAPACITY',
            'LIMITS',
            ...(wide ? ['REPLACES'] : []),
          ],
          plan.nodePools.map((p) => [
            p.name,
            requirement(p.spec, 'node.kubernetes.io/instance-type'),
            requirement(p.spec, 'topology.kubernetes.io/zone'),
            requirement(p.spec, 'karpenter.sh/capacity-type'),
            limits(p.spec),
            ...(wide ? [p.replaces.join(',')] : []),
          ]),
        ),
  );
  out.push('\nWHY\n');
  for (const p of plan.nodePools) for (const e of p.explanations) out.push(`  ${p.name}: ${e}\n`);
  for (const e of plan.nodeClassExplanations) out.push(`  nodeclass: ${e}\n`);
  for (const e of plan.explanations) out.push(`  plan: ${e}\n`);
  if (Object.keys(plan.nodeClassOverrides).length > 0)
    out.push(`\nNODECLASS OVERRIDES\n  ${JSON.stringify(plan.nodeClassOverrides)}\n`);
  out.push('\nNOT EXPRESSIBLE\n');
  out.push(
    plan.notExpressible.length === 0
      ? '  nothing\n'
      : table(
          ['OBJECT', 'WHAT', 'REASON'],
          plan.notExpressible.map((n) => [n.object, n.what, n.reason]),
        ).replace(/^/gm, '  '),
  );
  out.push(
    `\ncomputed ${plan.computedAt} at observed generation ${plan.observedGeneration}; the cluster is at generation ${r.generation}\n`,
  );
  return out.join('');
}

export const migrationPlanPrinter: Printer<MigrationPlanResult> = {
  table: (items) => items.map((r) => planText(r, false)).join('\n'),
  wide: (items) => items.map((r) => planText(r, true)).join('\n'),
  name: (r) => (r.plan?.nodePools ?? []).map((p) => `nodepool/${p.name}`).join('\n'),
};

/** `kfleet migrate plan|apply`: from the Cluster Autoscaler to Karpenter. */
export function addMigrateCommands(
  program: Command,
  { io, connect, readOutput }: CommandContext,
): void {
  const migrate = program
    .command('migrate')
    .description(
      "move a cluster from the Cluster Autoscaler to Karpenter with its sidecar's proposal",
    );

  migrate
    .command('plan')
    .description(
      'the NodePools proposed in place of the Cluster Autoscaler groups, why each choice, and what cannot be carried over',
    )
    .argument('<cluster>', 'cluster name or ID')
    .addOption(readOutput())
    .action(async (ref: string, opts: { output: OutputFormat }, cmd: Command) => {
      const request = connect(cmd);
      const id = await resolveCluster(request, ref);
      const { migrationPlan } = await request<{ migrationPlan: MigrationPlanResult }>(
        gql.MIGRATION_PLAN,
        { id },
      );
      io.stdout(print(opts.output, migrationPlan, migrationPlanPrinter));
    });

  migrate
    .command('apply')
    .description(
      'apply the plan as one desired-state change: its NodePools, Karpenter enabled, the Cluster Autoscaler kept running (MIGRATE); DISABLE it later with karpenter enable --cas disable',
    )
    .argument('<cluster>', 'cluster name or ID')
    .option(
      '--expected-generation <n>',
      'fail with CONFLICT unless the generation is still n (default: the generation the plan was read at)',
    )
    .action(async (ref: string, opts: { expectedGeneration?: string }, cmd: Command) => {
      const request = connect(cmd);
      const id = await resolveCluster(request, ref);
      let expectedGeneration = opts.expectedGeneration
        ? parseIntOption(opts.expectedGeneration, '--expected-generation', 1)
        : undefined;
      if (expectedGeneration === undefined) {
        const { migrationPlan } = await request<{ migrationPlan: MigrationPlanResult }>(
          gql.MIGRATION_PLAN,
          { id },
        );
        if (!migrationPlan.plan)
          throw new CliError(
            `no migration plan for ${ref}: ${migrationPlan.reason ?? 'none reported'}`,
            'FAILED_PRECONDITION',
          );
        expectedGeneration = migrationPlan.generation;
      }
      const { applyMigrationPlan: c } = await request<{ applyMigrationPlan: ClusterAck }>(
        gql.APPLY_MIGRATION_PLAN,
        { id, expectedGeneration },
      );
      io.stdout(
        ack(
          c,
          `migration plan applied, karpenter enabled, cluster autoscaler ${c.karpenter.clusterAutoscalerMode}`,
        ),
      );
    });
}
