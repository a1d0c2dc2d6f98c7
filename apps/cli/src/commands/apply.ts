import type { Command } from 'commander';
import { collect, type CommandContext } from './context.js';
import { withStrategy } from './profiles.js';
import type { ApplyOptions } from './apply-run.js';

/**
 * `kfleet apply -f` and `kfleet export` (docs/GITOPS.md): the fleet's profiles and cluster
 * overrides as YAML. Apply checks every document first (nothing is sent if one is invalid),
 * prints the plan, then writes through the same mutations as `kfleet profiles` and
 * `clusters reset`, so profiles go through their rollouts and every write is audited.
 *
 * The commands' work lives in apply-run.ts, imported when one of them runs: it needs the CRD
 * validator, and with it every CloudProvider driver and their SDKs, which every other kfleet
 * command would otherwise load at start-up for nothing (docs/PERFORMANCE.md, kfleet start-up).
 */
export function addApplyCommands(program: Command, context: CommandContext): void {
  withStrategy(
    program
      .command('apply')
      .description(
        'apply rollout strategies, profiles and cluster overrides declared in YAML: checked first, a plan shown, then written',
      )
      .requiredOption(
        '-f, --filename <path>',
        'a YAML file, or a directory read recursively for *.yaml/*.yml (repeatable; - for stdin)',
        collect,
      )
      .option('--dry-run', 'check and print the plan; write nothing')
      .option(
        '--prune',
        'also delete strategies and profiles and clear cluster overrides the files no longer hold (only kinds the files contain)',
      )
      .option(
        '--timeout <seconds>',
        'how long a profile write waits for another rollout on its clusters to complete',
        '600',
      ),
  ).action(async (opts: ApplyOptions, cmd: Command) =>
    (await import('./apply-run.js')).applyManifests(opts, cmd, context),
  );

  program
    .command('export')
    .description(
      "write the fleet's rollout strategies, profiles and cluster overrides as the YAML kfleet apply reads (what your token sees)",
    )
    .option('-o, --output <dir|->', 'a directory (one file per object), or - for one stream', '-')
    .action(async (opts: { output: string }, cmd: Command) =>
      (await import('./apply-run.js')).exportFleet(opts, cmd, context),
    );
}
