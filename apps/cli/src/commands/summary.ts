import type { Command } from 'commander';
import * as gql from '../documents.js';
import { print, render, table, type OutputFormat } from '../format.js';
import { watch } from '../live.js';
import { WATCH_REFETCH_MS } from './clusters.js';
import { type CommandContext } from './context.js';

/** `kfleet summary`: fleet-wide counts. */
export function addSummaryCommands(
  program: Command,
  { io, connect, live, readOutput }: CommandContext,
): void {
  const printer = {
    table: (items: readonly FleetSummary[]) => items.map(summaryText).join('\n'),
    name: () => 'fleetsummary/fleet',
  };
  program
    .command('summary')
    .description('fleet-wide counts over the clusters your token may see; --watch follows them')
    .option('-w, --watch', 'print the counts again each time they change')
    .option('--timeout <duration>', 'with --watch: stop after this long (default never)')
    .addOption(readOutput())
    .action(
      async (opts: { output: OutputFormat; watch?: boolean; timeout?: string }, cmd: Command) => {
        const request = connect(cmd);
        const get = async () =>
          (await request<{ fleetSummary: FleetSummary }>(gql.FLEET_SUMMARY)).fleetSummary;
        if (!opts.watch) return io.stdout(print(opts.output, await get(), printer));
        const client = await live(cmd);
        let last: string | undefined;
        await watch<FleetSummary>(
          {
            client,
            query: gql.FLEET_SUMMARY_CHANGED,
            variables: {},
            pick: (d) => d.fleetSummaryChanged as FleetSummary,
            fetch: get,
            pollMs: WATCH_REFETCH_MS,
            timeout: opts.timeout,
          },
          (s) => {
            const text = JSON.stringify(s);
            if (text === last) return;
            const again = last !== undefined;
            last = text;
            if (opts.output === 'json') io.stdout(`${text}\n`);
            else if (opts.output === 'yaml') io.stdout(`---\n${render(s, 'yaml')}`);
            else io.stdout(`${again ? '\n' : ''}${print(opts.output, s, printer)}`);
          },
        );
      },
    );
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
  byHostedMode?: { value: string; count: number }[];
  bySidecarVersion?: { value: string; count: number }[];
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
  if (s.byHostedMode?.length)
    sections.push(
      table(
        ['HOSTED-MODE', 'COUNT'],
        s.byHostedMode.map((p) => [p.value, String(p.count)]),
      ),
    );
  if (s.byCondition.length)
    sections.push(
      table(
        ['CONDITION', 'STATUS', 'REASON', 'COUNT'],
        s.byCondition.map((c) => [c.type, c.status, c.reason, String(c.count)]),
      ),
    );
  return sections.join('\n');
}
