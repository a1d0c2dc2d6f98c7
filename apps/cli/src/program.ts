import { Command, CommanderError } from 'commander';
// The release alone, not the @fleet/contracts barrel: that loads ioredis and zod, which kfleet's
// start-up would pay on every command (docs/PERFORMANCE.md, kfleet start-up).
import { FLEET_RELEASE } from '@fleet/contracts/release';
import { CliError, EXIT, formatError } from './errors.js';
import { addApplyCommands } from './commands/apply.js';
import { addAuthCommands } from './commands/auth.js';
import { addClusterActivityCommands } from './commands/cluster-activity.js';
import { addClustersCommands } from './commands/clusters.js';
import { addCompletionCommands } from './commands/completion.js';
import { commandContext, DEFAULT_API_URL, type Io } from './commands/context.js';
import { addDeadLettersCommands } from './commands/dead-letters.js';
import { addKarpenterCommands } from './commands/karpenter.js';
import { addMigrateCommands } from './commands/migrate.js';
import { addNodeclassCommands } from './commands/nodeclass.js';
import { addNodepoolsCommands } from './commands/nodepools.js';
import { addRolloutsCommands } from './commands/rollouts.js';
import { addProfilesCommands } from './commands/profiles.js';
import { addStrategiesCommands } from './commands/strategies.js';
import { addPlanCommands } from './commands/plans.js';
import { addSummaryCommands } from './commands/summary.js';
import { addTokensCommands } from './commands/tokens.js';
import { addVersionCommand } from './commands/version.js';
import { addExamples } from './examples.js';

export { DEFAULT_API_URL, resolveCluster, type Io } from './commands/context.js';
export { summaryText, type FleetSummary } from './commands/summary.js';

/** The command tree; each group lives in its own module under commands/. */
export function buildProgram(io: Io): Command {
  const program = new Command('kfleet')
    .description('Karpenter Fleet: desired Karpenter state of a fleet of OpenShift clusters')
    .option('--api <url>', `fleet API base URL (env KFLEET_API_URL, default ${DEFAULT_API_URL})`)
    .option('--token <token>', 'API token (env KFLEET_TOKEN)')
    .option(
      '--context <name>',
      'context of the config file to use (env KFLEET_CONTEXT; default its current context)',
    )
    .version(FLEET_RELEASE, '--version', "the client's version")
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout(s),
      writeErr: (s) => io.stderr(s),
    });

  const context = commandContext(io);
  addAuthCommands(program, context);
  addClustersCommands(program, context);
  addClusterActivityCommands(
    program.commands.find((c) => c.name() === 'clusters')!,
    context,
  );
  addKarpenterCommands(program, context);
  addNodepoolsCommands(program, context);
  addNodeclassCommands(program, context);
  addMigrateCommands(program, context);
  addSummaryCommands(program, context);
  addTokensCommands(program, context);
  addRolloutsCommands(program, context);
  addProfilesCommands(program, context);
  addStrategiesCommands(program, context);
  addApplyCommands(program, context);
  addPlanCommands(program, context);
  addDeadLettersCommands(program, context);
  addVersionCommand(program, context);
  addCompletionCommands(program, context);
  addExamples(program);
  return program;
}

/**
 * Parses and runs; returns the exit code. User errors become one line on stderr. Anything else
 * is a bug in the CLI, and KFLEET_DEBUG=1 shows its stack.
 */
export async function run(argv: readonly string[], io: Io): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync([...argv]);
    return EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander has printed its own message; help and --version exit 0.
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (err instanceof CliError) {
      io.stderr(`${formatError(err)}\n`);
      return err.exitCode;
    }
    io.stderr(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    if (io.env.KFLEET_DEBUG && err instanceof Error && err.stack) io.stderr(`${err.stack}\n`);
    return EXIT.other;
  }
}
