import type { Command } from 'commander';
import * as gql from '../documents.js';
import { parseSeconds } from '../args.js';
import { chart } from '../chart.js';
import { usageError } from '../errors.js';
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

  program
    .command('history')
    .description(
      'the fleet by health state per hour (healthy, progressing, degraded, stale): a terminal chart and the counts; an hour without data is a gap',
    )
    .option('--since <duration>', 'how far back, whole hours up to 31d, e.g. 24h, 7d', '24h')
    .addOption(readOutput())
    .action(async (opts: { since: string; output: OutputFormat }, cmd: Command) => {
      const since = parseSeconds(opts.since, '--since');
      if (since < 3600 || since > 31 * 86_400)
        throw usageError(`--since ${opts.since}: between 1h and 31d`, '--since');
      const hour = 3_600_000;
      const to = new Date(Math.ceil(io.now().getTime() / hour) * hour);
      const from = new Date(to.getTime() - Math.ceil(since / 3600) * hour);
      const request = connect(cmd);
      const { fleetHealthHistory: points } = await request<{
        fleetHealthHistory: FleetHealthPoint[];
      }>(gql.FLEET_HEALTH_HISTORY, { from: from.toISOString(), to: to.toISOString() });
      if (opts.output === 'table' || opts.output === 'wide') {
        io.stdout(fleetHistoryText(points, opts.since, io.columns ?? 100));
        return;
      }
      io.stdout(
        print(opts.output, points, { table: () => '', name: (p) => `fleethealthpoint/${p.at}` }),
      );
    });
}

export interface FleetHealthPoint {
  at: string;
  healthy: number | null;
  progressing: number | null;
  degraded: number | null;
  stale: number | null;
}

/** The fleet's history as `kfleet clusters history` draws one cluster's: gaps stay gaps. */
export function fleetHistoryText(
  points: readonly FleetHealthPoint[],
  since: string,
  width: number,
): string {
  const covered = points.filter((p) => p.healthy !== null);
  const head = `fleet health, last ${since}, hourly: ${points.length} hours, ${covered.length} with data\n`;
  if (!covered.length)
    return `${head}no health history in this window (the worker rolls reports up by the hour)\n`;
  const max = Math.max(
    1,
    ...covered.map(
      (p) => (p.healthy ?? 0) + (p.progressing ?? 0) + (p.degraded ?? 0) + (p.stale ?? 0),
    ),
  );
  const series = (['healthy', 'progressing', 'degraded', 'stale'] as const).map((state) => ({
    label: state,
    values: points.map((p) => p[state]),
    scale: [0, max] as [number, number],
    format: (v: number) => String(Math.round(v * 10) / 10),
  }));
  return [
    head,
    chart(series, width),
    '\n',
    table(
      ['HOUR', 'HEALTHY', 'PROGRESSING', 'DEGRADED', 'STALE'],
      points.map((p) =>
        p.healthy === null
          ? [p.at, '<no data>', '', '', '']
          : [p.at, String(p.healthy), String(p.progressing), String(p.degraded), String(p.stale)],
      ),
    ),
  ].join('');
}

export interface FleetSummary {
  clusters: number;
  inSync: number;
  stale: number;
  byHealth?: {
    healthy: number;
    progressing: number;
    degraded: number;
    stale: number;
    paused: number;
  };
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
      ['CLUSTERS', 'HEALTHY', 'PROGRESSING', 'DEGRADED', 'STALE', 'PAUSED'],
      [
        [
          s.clusters,
          s.byHealth?.healthy ?? '',
          s.byHealth?.progressing ?? '',
          s.byHealth?.degraded ?? '',
          s.byHealth?.stale ?? s.stale,
          s.byHealth?.paused ?? s.paused,
        ].map(String),
      ],
    ),
    // Generation sync is its own fact: a degraded cluster can have applied the latest generation.
    table(
      ['KARPENTER', 'CAS-DISABLED', 'LATEST-GENERATION-APPLIED'],
      [
        [s.karpenterEnabled, s.clusterAutoscalerDisabled, `${s.inSync} of ${s.clusters}`].map(
          String,
        ),
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
