import type { Command } from 'commander';
import {
  parseCasMode,
  parseDuration,
  parseFeatureGates,
  parseIntOption,
  parseLogLevel,
} from '../args.js';
import * as gql from '../documents.js';
import { CliError, usageError } from '../errors.js';
import { table } from '../format.js';
import { deadline, follow } from '../live.js';
import { WATCH_REFETCH_MS } from './clusters.js';
import { collect, ack, resolveCluster, type ClusterAck, type CommandContext } from './context.js';

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

interface ClusterProgress {
  id: string;
  name: string;
  status: { observedGeneration: number; conditions: Condition[] };
}

const conditionTable = (conditions: readonly Condition[]): string =>
  conditions.length
    ? table(
        ['TYPE', 'STATUS', 'REASON', 'MESSAGE'],
        conditions.map((c) => [c.type, c.status, c.reason, c.message]),
      )
    : '(no conditions reported)\n';

/** `kfleet karpenter`: enable, disable. */
export function addKarpenterCommands(
  program: Command,
  { io, connect, live }: CommandContext,
): void {
  /**
   * Waits until the cluster reports `generation`: done if it is not Degraded then, WAIT_FAILED
   * (exit 5) if it is, TIMEOUT (exit 6) with its conditions when it never gets there.
   */
  const waitForGeneration = async (
    cmd: Command,
    id: string,
    generation: number,
    timeout: string,
  ) => {
    const request = connect(cmd);
    const get = async () =>
      (await request<{ cluster: ClusterProgress }>(gql.GET_CLUSTER, { id })).cluster;
    const first = await get();
    const client = await live(cmd);
    let last = first;
    const stop = deadline(
      parseDuration(timeout, '--timeout'),
      () =>
        `cluster/${last.name} still reports generation ${last.status.observedGeneration}, not ${generation}, after ${timeout}; its conditions:\n${conditionTable(last.status.conditions).trimEnd()}`,
    );
    const changes = follow<ClusterProgress>({
      client,
      query: gql.CLUSTER_DETAIL_CHANGED,
      variables: { filter: { nameContains: first.name } },
      pick: (d) => d.clusterChanged as ClusterProgress,
      fetch: get,
      pollMs: WATCH_REFETCH_MS,
    });
    const reached = (async () => {
      for await (const c of changes) {
        if (c.id !== id) continue;
        last = c;
        if (c.status.observedGeneration >= generation) return c;
      }
      throw new CliError(`cluster/${first.name}: the API closed the subscription`);
    })();
    let done: ClusterProgress;
    try {
      done = await Promise.race([reached, stop.promise]);
    } finally {
      stop.clear();
      await changes.return(undefined);
      await client.dispose();
    }
    const degraded = done.status.conditions.find(
      (c) => c.type === 'Degraded' && c.status === 'True',
    );
    if (degraded)
      throw new CliError(
        `cluster/${done.name} reports generation ${done.status.observedGeneration} Degraded (${degraded.reason}): ${degraded.message}`,
        'WAIT_FAILED',
      );
    io.stdout(`cluster/${done.name} reports generation ${done.status.observedGeneration}\n`);
  };

  const karpenter = program.command('karpenter').description('enable or disable Karpenter');
  for (const verb of ['enable', 'disable'] as const) {
    karpenter
      .command(verb)
      .description(`${verb} Karpenter on a cluster`)
      .argument('<cluster>', 'cluster name or ID')
      .option('--cas <mode>', 'Cluster Autoscaler: disable, keep or migrate')
      .option('--log-level <level>', 'debug, info or error')
      .option(
        '--feature-gate <Name=bool>',
        'feature gate, merged over the current ones (repeatable)',
        collect,
      )
      .option(
        '--web-identity-role <arn>',
        'IAM role ARN the operand assumes on a Cloud Credential Operator Manual/STS cluster',
      )
      .option(
        '--instance-types <types>',
        'CAPI: comma-separated instance types to render MachineDeployments for ("" for the worker template’s)',
      )
      .option('--expected-generation <n>', 'fail with CONFLICT unless the generation is still n')
      .option('--wait', 'return once the cluster reports the new generation')
      .option('--timeout <duration>', 'with --wait: give up after this long (exit 6)', '5m')
      .action(
        async (
          ref: string,
          opts: {
            cas?: string;
            logLevel?: string;
            featureGate?: string[];
            webIdentityRole?: string;
            instanceTypes?: string;
            expectedGeneration?: string;
            wait?: boolean;
            timeout: string;
          },
          cmd: Command,
        ) => {
          if (opts.timeout !== '5m' && !opts.wait)
            throw usageError('--timeout goes with --wait', '--timeout');
          parseDuration(opts.timeout, '--timeout');
          const input: Record<string, unknown> = { enabled: verb === 'enable' };
          if (opts.cas) input.clusterAutoscalerMode = parseCasMode(opts.cas);
          if (opts.logLevel) input.logLevel = parseLogLevel(opts.logLevel);
          // Validated by the API, which names the field in its refusal.
          if (opts.webIdentityRole) input.webIdentityRoleArn = opts.webIdentityRole;
          if (opts.instanceTypes !== undefined)
            input.allowedInstanceTypes = opts.instanceTypes
              .split(',')
              .map((t) => t.trim())
              .filter(Boolean);
          if (opts.expectedGeneration)
            input.expectedGeneration = parseIntOption(
              opts.expectedGeneration,
              '--expected-generation',
              1,
            );
          const gates = opts.featureGate ? parseFeatureGates(opts.featureGate) : undefined;
          const request = connect(cmd);
          const id = await resolveCluster(request, ref);
          if (gates) {
            // The API replaces the whole map; merging here keeps `--feature-gate X=true` additive.
            const { cluster } = await request<{
              cluster: { karpenter: { featureGates: Record<string, boolean> } };
            }>(gql.CLUSTER_LABELS_AND_GATES, { id });
            input.featureGates = { ...cluster.karpenter.featureGates, ...gates };
          }
          const { setKarpenter: c } = await request<{ setKarpenter: ClusterAck }>(
            gql.SET_KARPENTER,
            {
              id,
              input,
            },
          );
          io.stdout(
            ack(c, `karpenter ${verb}d, cluster autoscaler ${c.karpenter.clusterAutoscalerMode}`),
          );
          if (opts.wait) await waitForGeneration(cmd, id, c.karpenter.generation, opts.timeout);
        },
      );
  }
}
