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
import { approvalNeeded, CliError, usageError } from '../errors.js';
import { age, print, table, type OutputFormat } from '../format.js';
import { deadline, follow } from '../live.js';
import { RolloutProgress, TERMINAL_ROLLOUT_STATES, type RolloutProgressView } from '../progress.js';
import { parseDuration } from '../args.js';
import {
  ROLLOUT_STATES,
  collect,
  pages,
  type Page,
  type RolloutRow,
  type Io,
  type CommandContext,
} from './context.js';

/** How often `rollouts watch` re-reads the rollout in case the WebSocket missed a change. */
export const ROLLOUT_REFETCH_MS = 5_000;

/** `kfleet rollouts`: start, list, get, watch, pause, resume, abort. */
export function addRolloutsCommands(
  program: Command,
  { io, connect, live, readOutput }: CommandContext,
): void {
  /**
   * Follows a rollout to its end, printing its progress on stdout. COMPLETED returns; FAILED or ABORTED is WAIT_FAILED
   * (exit 5), running out of --timeout is TIMEOUT (exit 6), and an approval gate reached is
   * APPROVAL_NEEDED (exit 7, naming the approve command) — scripts branch on each.
   */
  const watchRollout = async (cmd: Command, id: string, timeout: string | undefined) => {
    const request = connect(cmd);
    const client = await live(cmd);
    const progress = new RolloutProgress(Boolean(io.tty?.stdout), io.columns ?? 80);
    let last: RolloutProgressView | undefined;
    const limit = timeout && timeout !== '0' ? parseDuration(timeout, '--timeout') : 0;
    const stop = deadline(
      limit,
      () =>
        `--timeout ${timeout} reached; ${last ? summaryOf(last) : `rollout/${id} not read yet`}`,
    );
    const changes = follow<RolloutProgressView>({
      client,
      query: gql.ROLLOUT_CHANGED,
      variables: { id },
      pick: (d) => d.rolloutChanged as RolloutProgressView,
      fetch: async () =>
        (await request<{ rollout: RolloutProgressView }>(gql.GET_ROLLOUT, { id })).rollout,
      pollMs: ROLLOUT_REFETCH_MS,
    });
    const consume = (async () => {
      for await (const r of changes) {
        last = r;
        io.stdout(progress.update(r));
        if ((TERMINAL_ROLLOUT_STATES as readonly string[]).includes(r.state)) return r;
        // Nothing moves until someone approves: waiting on would wait forever (or to --timeout).
        if (r.state === 'WAITING_APPROVAL') return r;
      }
      throw new CliError(`rollout/${id}: the API closed the subscription`);
    })();
    let end: RolloutProgressView;
    try {
      end = await Promise.race([consume, stop.promise]);
    } finally {
      stop.clear();
      await changes.return(undefined);
      await client.dispose();
    }
    if (end.state === 'WAITING_APPROVAL') throw approvalNeeded(end.id, end.waitingStage);
    if (end.state !== 'COMPLETED')
      throw new CliError(
        `rollout/${end.id} ${end.state}${end.reason ? `: ${end.reason}` : ''}`,
        'WAIT_FAILED',
      );
  };

  const rollouts = program
    .command('rollouts')
    .description('apply one change across clusters in waves');

  rollouts
    .command('start')
    .description(
      "start a rollout of one change to the clusters a selector matches, or of a plan's change to its PLANNED clusters (--plan)",
    )
    .option('-l, --selector <selector>', 'label selector ("" for every cluster in scope)')
    .option(
      '--plan <id>',
      'roll out a plan (kfleet plan): its change, its PLANNED clusters; excludes -l and the change flags',
    )
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
    .option(
      '--strategy <name>',
      'a named rollout strategy; excludes --waves and the other strategy flags',
    )
    .option('--waves <steps>', 'cumulative steps, e.g. 1,10%,50%,100%')
    .option('--max-failures <n>', 'failed clusters tolerated before the rollout stops')
    .option('--min-healthy-seconds <n>', 'how long each cluster must stay healthy')
    .option('--wave-timeout-seconds <n>', 'per-wave deadline')
    .option('--wait', 'follow the rollout to its end; exit 5 if it fails or is aborted')
    .option('--timeout <duration>', 'with --wait: give up after this long (exit 6), e.g. 30m')
    .action(async (opts: RolloutStartOptions, cmd: Command) => {
      if (opts.timeout && !opts.wait) throw usageError('--timeout goes with --wait', '--timeout');
      if (opts.plan !== undefined && opts.selector !== undefined)
        throw usageError('--plan and --selector exclude each other', '--plan');
      if (opts.plan === undefined && opts.selector === undefined)
        throw usageError('give -l/--selector (with a change) or --plan', '--selector');
      const change = opts.plan === undefined ? await rolloutChange(opts, io) : undefined;
      if (opts.plan !== undefined && Object.keys(await rolloutChange(opts, io, false)).length)
        throw usageError('--plan carries its own change: leave out the change flags', '--plan');
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
      if (opts.strategy !== undefined && Object.keys(strategy).length)
        throw usageError(
          '--strategy names a strategy: leave out --waves, --max-failures, --min-healthy-seconds and --wave-timeout-seconds',
          '--strategy',
        );
      const strategyVars =
        opts.strategy !== undefined
          ? { strategyName: opts.strategy }
          : Object.keys(strategy).length
            ? { strategy }
            : {};
      const { startRollout: r } = await connect(cmd)<{ startRollout: RolloutRow }>(
        opts.plan !== undefined ? gql.START_ROLLOUT_FROM_PLAN : gql.START_ROLLOUT,
        opts.plan !== undefined
          ? { planId: opts.plan, ...strategyVars }
          : { selector: opts.selector, change, ...strategyVars },
      );
      io.stdout(`rollout/${r.id} started: ${r.state}, ${r.counts.total} clusters\n`);
      if (opts.wait) await watchRollout(cmd, r.id, opts.timeout);
    });

  rollouts
    .command('watch')
    .description(
      'follow a rollout live until it ends: waves, clusters done / in progress / failed; exit 5 if it fails',
    )
    .argument('<id>', 'rollout ID')
    .option('--timeout <duration>', 'give up after this long (exit 6), e.g. 30m')
    .action(async (id: string, opts: { timeout?: string }, cmd: Command) => {
      await watchRollout(cmd, id, opts.timeout);
    });

  rollouts
    .command('list')
    .alias('ls')
    .description('rollouts, newest first')
    .option('--state <state>', 'RUNNING, PAUSED, FAILED, COMPLETED or ABORTED')
    .addOption(readOutput())
    .action(async (opts: { state?: string; output: OutputFormat }, cmd: Command) => {
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
      io.stdout(print(opts.output, rows, rolloutPrinter(io.now())));
    });

  rollouts
    .command('get')
    .description('a rollout with its waves and clusters')
    .argument('<id>', 'rollout ID')
    .addOption(readOutput('yaml'))
    .action(async (id: string, opts: { output: OutputFormat }, cmd: Command) => {
      const { rollout } = await connect(cmd)<{ rollout: RolloutRow }>(gql.GET_ROLLOUT, { id });
      io.stdout(print(opts.output, rollout, rolloutPrinter(io.now())));
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
    .command('approve')
    .description('approve the stage a rollout waits at (WAITING_APPROVAL), so its next wave starts')
    .argument('<id>', 'rollout ID')
    .option(
      '--stage <n>',
      'the wave to approve (default: the one waiting); guards against approving a later gate',
    )
    .action(async (id: string, opts: { stage?: string }, cmd: Command) => {
      const request = connect(cmd);
      let stage = opts.stage !== undefined ? parseIntOption(opts.stage, '--stage', 0) : undefined;
      if (stage === undefined) {
        const { rollout } = await request<{ rollout: RolloutRow }>(gql.GET_ROLLOUT, { id });
        if (rollout.waitingStage == null)
          throw new CliError(
            `rollout/${rollout.id} is ${rollout.state}, not waiting for approval${rollout.reason ? ` (${rollout.reason})` : ''}`,
          );
        stage = rollout.waitingStage;
      }
      const { approveRolloutStage: r } = await request<{ approveRolloutStage: RolloutRow }>(
        gql.APPROVE_ROLLOUT_STAGE,
        { id, stage },
      );
      io.stdout(
        `rollout/${r.id}: stage ${stage} approved, ${r.state}${r.reason ? ` (${r.reason})` : ''}\n`,
      );
    });
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

const summaryOf = (r: RolloutProgressView): string =>
  `rollout/${r.id} ${r.state}, ${r.counts.healthy}/${r.counts.total} healthy, ${r.counts.failed} failed`;

const rolloutCells = (r: RolloutRow, now: Date) => [
  r.id,
  r.state,
  r.selector || '<all>',
  String(r.currentWave),
  `${r.counts.healthy}/${r.counts.total}`,
  String(r.counts.failed),
  String(r.counts.skipped),
  age(r.createdAt, now),
];
const ROLLOUT_COLUMNS = ['ID', 'STATE', 'SELECTOR', 'WAVE', 'HEALTHY', 'FAILED', 'SKIPPED', 'AGE'];

const rolloutPrinter = (now: Date) => ({
  table: (items: readonly RolloutRow[]) =>
    table(
      ROLLOUT_COLUMNS,
      items.map((r) => rolloutCells(r, now)),
    ),
  wide: (items: readonly RolloutRow[]) =>
    table(
      [...ROLLOUT_COLUMNS, 'APPLYING', 'CREATED-BY', 'CHANGE', 'REASON'],
      items.map((r) => [
        ...rolloutCells(r, now),
        String(r.counts.applying),
        r.createdBy ?? '',
        JSON.stringify(r.change ?? {}),
        r.reason ?? '',
      ]),
    ),
  name: (r: RolloutRow) => `rollout/${r.id}`,
});

interface RolloutStartOptions {
  wait?: boolean;
  timeout?: string;
  selector?: string;
  plan?: string;
  enable?: boolean;
  disable?: boolean;
  cas?: string;
  logLevel?: string;
  featureGate?: string[];
  nodepoolFile?: string;
  nodepoolName?: string;
  deleteNodepool?: string;
  strategy?: string;
  waves?: string;
  maxFailures?: string;
  minHealthySeconds?: string;
  waveTimeoutSeconds?: string;
}

async function rolloutChange(
  opts: RolloutStartOptions,
  io: Io,
  required = true,
): Promise<Record<string, unknown>> {
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
  if (required && Object.keys(change).length === 0)
    throw usageError('give a change: --enable, --disable, --cas, --log-level, --feature-gate, ...');
  return change;
}
