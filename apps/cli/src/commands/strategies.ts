import type { Command } from 'commander';
import { parse as parseYaml } from 'yaml';
import * as gql from '../documents.js';
import { usageError } from '../errors.js';
import { print, table, type OutputFormat, type Printer } from '../format.js';
import type { CommandContext } from './context.js';

interface StageRow {
  selector: string | null;
  percent: number | null;
  count: number | null;
  minHealthySeconds: number;
  pauseSeconds: number;
  approval: boolean;
}
interface StrategyRow {
  name: string;
  stages: StageRow[];
  maxFailures: number;
  waveTimeoutSeconds: number;
  maxNodeClaimLaunchFailures: number | null;
  maxPendingPodSeconds: number | null;
}

/** "canary=true!" (approval), "25%+1h"-like compact form: selector or share, then its gates. */
const stageText = (s: StageRow): string =>
  (s.selector != null ? `[${s.selector}]` : s.percent != null ? `${s.percent}%` : String(s.count)) +
  (s.pauseSeconds ? ` +${s.pauseSeconds}s` : '') +
  (s.approval ? ' !approve' : '');

const strategyPrinter: Printer<StrategyRow> = {
  table: (items) =>
    table(
      ['NAME', 'STAGES', 'MAX-FAILURES', 'WAVE-TIMEOUT', 'KARPENTER-GATES'],
      items.map((s) => [
        s.name,
        s.stages.map(stageText).join(', '),
        String(s.maxFailures),
        `${s.waveTimeoutSeconds}s`,
        [
          s.maxNodeClaimLaunchFailures != null
            ? `launchFailures>${s.maxNodeClaimLaunchFailures}`
            : '',
          s.maxPendingPodSeconds != null ? `pending>${s.maxPendingPodSeconds}s` : '',
        ]
          .filter(Boolean)
          .join(',') || '-',
      ]),
    ),
  name: (s) => `strategy/${s.name}`,
};

/**
 * `kfleet strategies`: named rollout strategies (stages, approval gates, timed pauses, Karpenter
 * health gates) that `rollouts start`, `profiles create|update|delete` name with --strategy.
 */
export function addStrategiesCommands(
  program: Command,
  { io, connect, readOutput }: CommandContext,
): void {
  /** The definition as YAML: stages, maxFailures, waveTimeoutSeconds, the Karpenter gates. */
  const readDefinition = async (file: string): Promise<Record<string, unknown>> => {
    let text: string;
    try {
      text = await io.readFile(file);
    } catch (err) {
      throw usageError(`cannot read ${file}: ${(err as Error).message}`, '-f');
    }
    try {
      const doc = parseYaml(text) as unknown;
      if (!doc || typeof doc !== 'object' || Array.isArray(doc))
        throw new Error('expected a mapping with stages (and maxFailures, waveTimeoutSeconds, …)');
      return doc as Record<string, unknown>;
    } catch (err) {
      throw usageError(`${file}: ${(err as Error).message}`, '-f');
    }
  };

  const strategies = program
    .command('strategies')
    .description('named rollout strategies: stages, approval gates, timed pauses, health gates');

  strategies
    .command('list')
    .alias('ls')
    .description('rollout strategies, by name')
    .addOption(readOutput())
    .action(async (opts: { output: OutputFormat }, cmd: Command) => {
      const { rolloutStrategies: rows } = await connect(cmd)<{ rolloutStrategies: StrategyRow[] }>(
        gql.LIST_STRATEGIES,
      );
      io.stdout(print(opts.output, rows, strategyPrinter));
    });

  strategies
    .command('get')
    .description('show one rollout strategy')
    .argument('<name>', 'strategy name')
    .addOption(readOutput('yaml'))
    .action(async (name: string, opts: { output: OutputFormat }, cmd: Command) => {
      const { rolloutStrategy } = await connect(cmd)<{ rolloutStrategy: StrategyRow }>(
        gql.GET_STRATEGY,
        { name },
      );
      io.stdout(print(opts.output, rolloutStrategy, strategyPrinter));
    });

  strategies
    .command('create')
    .description('create a named rollout strategy from YAML (unscoped OPERATOR token)')
    .argument('<name>', 'DNS-1123 label')
    .requiredOption('-f, --filename <file>', 'YAML: stages, maxFailures, waveTimeoutSeconds, …')
    .action(async (name: string, opts: { filename: string }, cmd: Command) => {
      const input = { name, ...(await readDefinition(opts.filename)) };
      await connect(cmd)(gql.CREATE_STRATEGY, { input });
      io.stdout(`strategy/${name} created\n`);
    });

  strategies
    .command('update')
    .description(
      'replace a strategy with the YAML (rollouts already started keep the copy they took)',
    )
    .argument('<name>', 'strategy name')
    .requiredOption('-f, --filename <file>', 'YAML: the whole definition')
    .action(async (name: string, opts: { filename: string }, cmd: Command) => {
      await connect(cmd)(gql.UPDATE_STRATEGY, {
        name,
        input: await readDefinition(opts.filename),
      });
      io.stdout(`strategy/${name} updated\n`);
    });

  strategies
    .command('delete')
    .description('delete a strategy (ADMIN); rollouts started from it keep their copy')
    .argument('<name>', 'strategy name')
    .option('--yes', 'confirm')
    .action(async (name: string, opts: { yes?: boolean }, cmd: Command) => {
      if (!opts.yes)
        throw usageError(
          `deleting strategy ${name}: profile writes and rollouts can no longer name it; add --yes`,
          '--yes',
        );
      await connect(cmd)(gql.DELETE_STRATEGY, { name });
      io.stdout(`strategy/${name} deleted\n`);
    });
}
