import type { Command } from 'commander';
import * as gql from '../documents.js';
import { render, table } from '../format.js';
import { type CommandContext } from './context.js';

/** `kfleet summary`: fleet-wide counts. */
export function addSummaryCommands(
  program: Command,
  { io, connect, outputOption }: CommandContext,
): void {
  program
    .command('summary')
    .description('fleet-wide counts over the clusters your token may see')
    .addOption(outputOption(['table', 'json', 'yaml'], 'table'))
    .action(async (opts: { output: 'table' | 'json' | 'yaml' }, cmd: Command) => {
      const { fleetSummary: s } = await connect(cmd)<{ fleetSummary: FleetSummary }>(
        gql.FLEET_SUMMARY,
      );
      if (opts.output !== 'table') return io.stdout(render(s, opts.output));
      io.stdout(summaryText(s));
    });
}

export interface FleetSummary {
  clusters: number;
  inSync: number;
  stale: number;
  paused: number;
  karpenterEnabled: number;
  clusterAutoscalerDisabled: number;
  byPlatform: { value: string; count: number }[];
  byTopology: { value: string; count: number }[];
  byCondition: { type: string; status: string; reason: string; count: number }[];
}

export function summaryText(s: FleetSummary): string {
  const sections = [
    table(
      ['CLUSTERS', 'KARPENTER', 'IN-SYNC', 'STALE', 'PAUSED', 'CAS-DISABLED'],
      [
        [
          s.clusters,
          s.karpenterEnabled,
          s.inSync,
          s.stale,
          s.paused,
          s.clusterAutoscalerDisabled,
        ].map(String),
      ],
    ),
    table(
      ['PLATFORM', 'COUNT'],
      s.byPlatform.map((p) => [p.value, String(p.count)]),
    ),
    table(
      ['TOPOLOGY', 'COUNT'],
      s.byTopology.map((p) => [p.value, String(p.count)]),
    ),
  ];
  if (s.byCondition.length)
    sections.push(
      table(
        ['CONDITION', 'STATUS', 'REASON', 'COUNT'],
        s.byCondition.map((c) => [c.type, c.status, c.reason, String(c.count)]),
      ),
    );
  return sections.join('\n');
}
