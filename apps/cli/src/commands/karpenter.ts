import type { Command } from 'commander';
import { parseCasMode, parseFeatureGates, parseIntOption, parseLogLevel } from '../args.js';
import * as gql from '../documents.js';
import { collect, ack, resolveCluster, type ClusterAck, type CommandContext } from './context.js';

/** `kfleet karpenter`: enable, disable. */
export function addKarpenterCommands(program: Command, { io, connect }: CommandContext): void {
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
      .option('--expected-generation <n>', 'fail with CONFLICT unless the generation is still n')
      .action(
        async (
          ref: string,
          opts: {
            cas?: string;
            logLevel?: string;
            featureGate?: string[];
            expectedGeneration?: string;
          },
          cmd: Command,
        ) => {
          const input: Record<string, unknown> = { enabled: verb === 'enable' };
          if (opts.cas) input.clusterAutoscalerMode = parseCasMode(opts.cas);
          if (opts.logLevel) input.logLevel = parseLogLevel(opts.logLevel);
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
        },
      );
  }
}
