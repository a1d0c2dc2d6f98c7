import type { Command } from 'commander';
import { parse as parseYaml } from 'yaml';
import { parseIntOption, parseWaves } from '../args.js';
import * as gql from '../documents.js';
import { usageError } from '../errors.js';
import { print, table, type OutputFormat, type Printer } from '../format.js';
import type { CommandContext, RolloutRow } from './context.js';

export interface ProfileRow {
  name: string;
  selector: string;
  priority: number;
  revision: number;
  spec: Record<string, unknown>;
  deleting: boolean;
  boundClusters: number;
  currentClusters: number;
}

export interface StrategyOptions {
  strategy?: string;
  waves?: string;
  maxFailures?: string;
  minHealthySeconds?: string;
  waveTimeoutSeconds?: string;
}

const profilePrinter: Printer<ProfileRow> = {
  table: (items) =>
    table(
      ['NAME', 'PRIORITY', 'SELECTOR', 'REVISION', 'CLUSTERS', 'FIELDS'],
      items.map((p) => [
        p.deleting ? `${p.name} (deleting)` : p.name,
        String(p.priority),
        p.selector === '' ? '(every cluster)' : p.selector,
        String(p.revision),
        p.currentClusters === p.boundClusters
          ? String(p.boundClusters)
          : `${p.currentClusters}/${p.boundClusters} at r${p.revision}`,
        fieldsOf(p.spec).join(','),
      ]),
    ),
  name: (p) => `profile/${p.name}`,
};

function fieldsOf(spec: Record<string, unknown>): string[] {
  return Object.entries(spec).flatMap(([k, v]) =>
    k === 'nodePools' && v && typeof v === 'object'
      ? Object.keys(v).map((n) => `nodePools.${n}`)
      : [k],
  );
}

/** The mutation's strategy variables: a named strategy (--strategy) or inline flags, not both. */
export function strategyOf(opts: StrategyOptions): {
  strategy?: Record<string, unknown>;
  strategyName?: string;
} {
  const inline = inlineStrategy(opts);
  if (opts.strategy !== undefined) {
    if (inline)
      throw usageError(
        '--strategy names a strategy: leave out --waves, --max-failures, --min-healthy-seconds and --wave-timeout-seconds',
        '--strategy',
      );
    return { strategyName: opts.strategy };
  }
  return inline ? { strategy: inline } : {};
}

function inlineStrategy(opts: StrategyOptions): Record<string, unknown> | undefined {
  const strategy: Record<string, unknown> = {};
  if (opts.waves) strategy.waves = parseWaves(opts.waves);
  if (opts.maxFailures) strategy.maxFailures = parseIntOption(opts.maxFailures, '--max-failures');
  if (opts.minHealthySeconds)
    strategy.minHealthySeconds = parseIntOption(opts.minHealthySeconds, '--min-healthy-seconds');
  if (opts.waveTimeoutSeconds)
    strategy.waveTimeoutSeconds = parseIntOption(
      opts.waveTimeoutSeconds,
      '--wave-timeout-seconds',
      1,
    );
  return Object.keys(strategy).length ? strategy : undefined;
}

export const withStrategy = (cmd: Command): Command =>
  cmd
    .option('--strategy <name>', 'a named rollout strategy (kfleet strategies) for its rollout')
    .option('--waves <steps>', 'cumulative steps of its rollout, e.g. 1,10%,50%,100%')
    .option('--max-failures <n>', 'failed clusters tolerated before the rollout stops')
    .option('--min-healthy-seconds <n>', 'how long each cluster must stay healthy')
    .option('--wave-timeout-seconds <n>', 'per-wave deadline');

/**
 * `kfleet profiles`: list, get, create, update, delete. A write prints the profile and the
 * rollout that takes it to the clusters (`kfleet rollouts watch <id>` follows it).
 */
export function addProfilesCommands(
  program: Command,
  { io, connect, readOutput }: CommandContext,
): void {
  const readSpec = async (file: string): Promise<unknown> => {
    let text: string;
    try {
      text = await io.readFile(file);
    } catch (err) {
      throw usageError(`cannot read ${file}: ${(err as Error).message}`, '-f');
    }
    try {
      const doc = parseYaml(text) as unknown;
      if (!doc || typeof doc !== 'object' || Array.isArray(doc))
        throw new Error('expected a mapping of the fields the profile sets');
      return doc;
    } catch (err) {
      throw usageError(`${file}: ${(err as Error).message}`, '-f');
    }
  };
  const reportWrite = (
    what: string,
    payload: { profile: ProfileRow | null; rollout: RolloutRow | null },
    name: string,
  ) =>
    io.stdout(
      `profile/${name} ${what}` +
        (payload.rollout
          ? `; rollout/${payload.rollout.id} ${payload.rollout.state}, ${payload.rollout.counts.total} clusters (kfleet rollouts watch ${payload.rollout.id})\n`
          : '; no cluster affected\n'),
    );

  const profiles = program
    .command('profiles')
    .description('named Karpenter desired state bound to clusters by label selector');

  profiles
    .command('list')
    .alias('ls')
    .description('profiles within your scope, by priority then name')
    .addOption(readOutput())
    .action(async (opts: { output: OutputFormat }, cmd: Command) => {
      const { profiles: rows } = await connect(cmd)<{ profiles: ProfileRow[] }>(gql.LIST_PROFILES);
      io.stdout(print(opts.output, rows, profilePrinter));
    });

  profiles
    .command('get')
    .description('show one profile')
    .argument('<name>', 'profile name')
    .addOption(readOutput('yaml'))
    .action(async (name: string, opts: { output: OutputFormat }, cmd: Command) => {
      const { profile } = await connect(cmd)<{ profile: ProfileRow }>(gql.GET_PROFILE, { name });
      io.stdout(print(opts.output, profile, profilePrinter));
    });

  withStrategy(
    profiles
      .command('create')
      .description('create a profile and roll it out to the clusters its selector matches')
      .argument('<name>', 'DNS-1123 label')
      .requiredOption('-l, --selector <selector>', 'label selector ("" for every cluster)')
      .requiredOption('--priority <n>', '0–1000; higher wins')
      .requiredOption('-f, --filename <file>', 'YAML of the fields it sets'),
  ).action(
    async (
      name: string,
      opts: StrategyOptions & { selector: string; priority: string; filename: string },
      cmd: Command,
    ) => {
      const input = {
        name,
        selector: opts.selector,
        priority: parseIntOption(opts.priority, '--priority'),
        spec: await readSpec(opts.filename),
      };
      const { createProfile } = await connect(cmd)<{
        createProfile: { profile: ProfileRow; rollout: RolloutRow | null };
      }>(gql.CREATE_PROFILE, { input, ...strategyOf(opts) });
      reportWrite('created', createProfile, name);
    },
  );

  withStrategy(
    profiles
      .command('update')
      .description('a new revision of a profile, rolled out to its clusters')
      .argument('<name>', 'profile name')
      .option('-l, --selector <selector>', 'new label selector')
      .option('--priority <n>', 'new priority')
      .option('-f, --filename <file>', 'YAML of the fields it sets, replacing them'),
  ).action(
    async (
      name: string,
      opts: StrategyOptions & { selector?: string; priority?: string; filename?: string },
      cmd: Command,
    ) => {
      const input: Record<string, unknown> = {};
      if (opts.selector !== undefined) input.selector = opts.selector;
      if (opts.priority !== undefined) input.priority = parseIntOption(opts.priority, '--priority');
      if (opts.filename !== undefined) input.spec = await readSpec(opts.filename);
      if (!Object.keys(input).length)
        throw usageError('give at least one of -l, --priority, -f', '--selector');
      const { updateProfile } = await connect(cmd)<{
        updateProfile: { profile: ProfileRow; rollout: RolloutRow | null };
      }>(gql.UPDATE_PROFILE, { name, input, ...strategyOf(opts) });
      reportWrite('updated', updateProfile, name);
    },
  );

  withStrategy(
    profiles
      .command('delete')
      .description('delete a profile: its rollout removes it from its clusters wave by wave')
      .argument('<name>', 'profile name')
      .option('--yes', 'confirm: its clusters lose what it sets'),
  ).action(async (name: string, opts: StrategyOptions & { yes?: boolean }, cmd: Command) => {
    if (!opts.yes)
      throw usageError(
        `deleting profile ${name} takes what it sets away from its clusters; add --yes`,
        '--yes',
      );
    const { deleteProfile } = await connect(cmd)<{
      deleteProfile: { profile: ProfileRow | null; rollout: RolloutRow | null };
    }>(gql.DELETE_PROFILE, { name, ...strategyOf(opts) });
    reportWrite('deleted', deleteProfile, name);
  });
}
