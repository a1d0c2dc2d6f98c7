import type { Command } from 'commander';
import {
  parseCasMode,
  parseEnumOption,
  parseFeatureGates,
  parseIntOption,
  parseLogLevel,
  parseNodePoolDocument,
  parseWaves,
} from '../args.js';
import * as gql from '../documents.js';
import { usageError } from '../errors.js';
import { age, render, table } from '../format.js';
import {
  ROLLOUT_STATES,
  collect,
  pages,
  type Page,
  type RolloutRow,
  type Io,
  type CommandContext,
} from './context.js';

/** `kfleet rollouts`: start, list, get, pause, resume, abort. */
export function addRolloutsCommands(
  program: Command,
  { io, connect, outputOption }: CommandContext,
): void {
  const rollouts = program
    .command('rollouts')
    .description('apply one change across clusters in waves');

  rollouts
    .command('start')
    .description('start a rollout of one change to the clusters a selector matches')
    .requiredOption('-l, --selector <selector>', 'label selector ("" for every cluster in scope)')
    .option('--enable', 'enable Karpenter')
    .option('--disable', 'disable Karpenter')
    .option('--cas <mode>', 'Cluster Autoscaler: disable, keep or migrate')
    .option('--log-level <level>', 'debug, info or error')
    .option(
      '--feature-gate <Name=bool>',
      'feature gate; the set given replaces the map (repeatable)',
      collect,
    )
    .option(
      '-f, --nodepool-file <file>',
      'NodePool manifest (or spec with --nodepool-name) to upsert',
    )
    .option('--nodepool-name <name>', 'NodePool name for --nodepool-file')
    .option('--delete-nodepool <name>', 'NodePool to delete')
    .option('--waves <steps>', 'cumulative steps, e.g. 1,10%,50%,100%')
    .option('--max-failures <n>', 'failed clusters tolerated before the rollout stops')
    .option('--min-healthy-seconds <n>', 'how long each cluster must stay healthy')
    .option('--wave-timeout-seconds <n>', 'per-wave deadline')
    .action(async (opts: RolloutStartOptions, cmd: Command) => {
      const change = await rolloutChange(opts, io);
      const strategy: Record<string, unknown> = {};
      if (opts.waves) strategy.waves = parseWaves(opts.waves);
      if (opts.maxFailures)
        strategy.maxFailures = parseIntOption(opts.maxFailures, '--max-failures');
      if (opts.minHealthySeconds)
        strategy.minHealthySeconds = parseIntOption(
          opts.minHealthySeconds,
          '--min-healthy-seconds',
        );
      if (opts.waveTimeoutSeconds)
        strategy.waveTimeoutSeconds = parseIntOption(
          opts.waveTimeoutSeconds,
          '--wave-timeout-seconds',
          1,
        );
      const { startRollout: r } = await connect(cmd)<{ startRollout: RolloutRow }>(
        gql.START_ROLLOUT,
        { selector: opts.selector, change, ...(Object.keys(strategy).length ? { strategy } : {}) },
      );
      io.stdout(`rollout/${r.id} started: ${r.state}, ${r.counts.total} clusters\n`);
    });

  rollouts
    .command('list')
    .alias('ls')
    .description('rollouts, newest first')
    .option('--state <state>', 'RUNNING, PAUSED, FAILED, COMPLETED or ABORTED')
    .addOption(outputOption(['table', 'json'], 'table'))
    .action(async (opts: { state?: string; output: string }, cmd: Command) => {
      const state = opts.state ? parseEnumOption(opts.state, '--state', ROLLOUT_STATES) : undefined;
      const rows: RolloutRow[] = [];
      for await (const nodes of pages<RolloutRow, { rollouts: Page<RolloutRow> }>(
        connect(cmd),
        gql.LIST_ROLLOUTS,
        state ? { state } : {},
        (d) => d.rollouts,
      )) {
        rows.push(...nodes);
      }
      if (opts.output === 'json') return io.stdout(render(rows, 'json'));
      const now = io.now();
      io.stdout(
        table(
          ['ID', 'STATE', 'SELECTOR', 'WAVE', 'HEALTHY', 'FAILED', 'SKIPPED', 'AGE'],
          rows.map((r) => [
            r.id,
            r.state,
            r.selector || '<all>',
            String(r.currentWave),
            `${r.counts.healthy}/${r.counts.total}`,
            String(r.counts.failed),
            String(r.counts.skipped),
            age(r.createdAt, now),
          ]),
        ),
      );
    });

  rollouts
    .command('get')
    .description('a rollout with its waves and clusters')
    .argument('<id>', 'rollout ID')
    .addOption(outputOption(['yaml', 'json'], 'yaml'))
    .action(async (id: string, opts: { output: 'yaml' | 'json' }, cmd: Command) => {
      const { rollout } = await connect(cmd)<{ rollout: unknown }>(gql.GET_ROLLOUT, { id });
      io.stdout(render(rollout, opts.output));
    });

  const rolloutVerb = (verb: string, document: string, field: string, what: string) =>
    rollouts
      .command(verb)
      .description(what)
      .argument('<id>', 'rollout ID')
      .action(async (id: string, _opts: unknown, cmd: Command) => {
        const data = await connect(cmd)<Record<string, RolloutRow>>(document, { id });
        const r = data[field]!;
        io.stdout(`rollout/${r.id}: ${r.state}${r.reason ? ` (${r.reason})` : ''}\n`);
      });
  rolloutVerb(
    'pause',
    gql.PAUSE_ROLLOUT,
    'pauseRollout',
    'no new cluster is changed until resumed',
  );
  rolloutVerb('resume', gql.RESUME_ROLLOUT, 'resumeRollout', 'continue a paused or failed rollout');
  rollouts
    .command('abort')
    .description('stop for good; clusters already changed keep the change (nothing is reverted)')
    .argument('<id>', 'rollout ID')
    .option('--reason <text>', 'recorded on the rollout')
    .action(async (id: string, opts: { reason?: string }, cmd: Command) => {
      const { abortRollout: r } = await connect(cmd)<{ abortRollout: RolloutRow }>(
        gql.ABORT_ROLLOUT,
        { id, reason: opts.reason },
      );
      io.stdout(`rollout/${r.id}: ${r.state}${r.reason ? ` (${r.reason})` : ''}\n`);
    });
}

interface RolloutStartOptions {
  selector: string;
  enable?: boolean;
  disable?: boolean;
  cas?: string;
  logLevel?: string;
  featureGate?: string[];
  nodepoolFile?: string;
  nodepoolName?: string;
  deleteNodepool?: string;
  waves?: string;
  maxFailures?: string;
  minHealthySeconds?: string;
  waveTimeoutSeconds?: string;
}

async function rolloutChange(opts: RolloutStartOptions, io: Io): Promise<Record<string, unknown>> {
  if (opts.enable && opts.disable) throw usageError('--enable and --disable exclude each other');
  if (opts.nodepoolFile && opts.deleteNodepool)
    throw usageError('one NodePool operation per rollout: --nodepool-file or --delete-nodepool');
  const change: Record<string, unknown> = {};
  if (opts.enable) change.enabled = true;
  if (opts.disable) change.enabled = false;
  if (opts.cas) change.clusterAutoscalerMode = parseCasMode(opts.cas);
  if (opts.logLevel) change.logLevel = parseLogLevel(opts.logLevel);
  if (opts.featureGate) change.featureGates = parseFeatureGates(opts.featureGate);
  if (opts.deleteNodepool) change.deleteNodePool = opts.deleteNodepool;
  if (opts.nodepoolFile) {
    let text: string;
    try {
      text = await io.readFile(opts.nodepoolFile);
    } catch (err) {
      throw usageError(`cannot read ${opts.nodepoolFile}: ${(err as Error).message}`, '-f');
    }
    change.upsertNodePool = parseNodePoolDocument(text, opts.nodepoolName);
  }
  if (Object.keys(change).length === 0)
    throw usageError('give a change: --enable, --disable, --cas, --log-level, --feature-gate, ...');
  return change;
}
