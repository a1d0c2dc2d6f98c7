import type { Command } from 'commander';
import * as gql from '../documents.js';
import { usageError } from '../errors.js';
import { age, print, table, type OutputFormat } from '../format.js';
import { pages, type CommandContext, type Page } from './context.js';

interface DeadLetter {
  id: string;
  queue: string;
  name: string;
  jobId: string;
  attempts: number;
  attemptsMade: number;
  failedAt: string;
  failedReason: string;
  data: unknown;
}

/** `kfleet dead-letters`: jobs that exhausted their attempts (ADMIN). */
export function addDeadLettersCommands(
  program: Command,
  { io, connect, readOutput }: CommandContext,
): void {
  const deadLetters = program
    .command('dead-letters')
    .description('jobs that exhausted their attempts, and putting them back (ADMIN)');

  deadLetters
    .command('list')
    .alias('ls')
    .description('every dead letter, oldest first')
    .option('--queue <queue>', 'only this queue')
    .addOption(readOutput())
    .action(async (opts: { queue?: string; output: OutputFormat }, cmd: Command) => {
      const rows: DeadLetter[] = [];
      for await (const nodes of pages<DeadLetter, { deadLetters: Page<DeadLetter> }>(
        connect(cmd),
        gql.LIST_DEAD_LETTERS,
        {},
        (d) => d.deadLetters,
      )) {
        rows.push(...nodes.filter((n) => !opts.queue || n.queue === opts.queue));
      }
      const now = io.now();
      const cells = (d: DeadLetter) => [
        d.id,
        d.queue,
        d.name,
        `${d.attemptsMade}/${d.attempts}`,
        `${age(d.failedAt, now)} ago`,
        d.failedReason,
      ];
      const headers = ['ID', 'QUEUE', 'JOB', 'ATTEMPTS', 'FAILED', 'REASON'];
      if (!rows.length && (opts.output === 'table' || opts.output === 'wide')) {
        io.stderr('No dead letters.\n');
        return;
      }
      io.stdout(
        print(opts.output, rows, {
          table: (items) => table(headers, items.map(cells)),
          wide: (items) =>
            table(
              [...headers, 'JOB-ID', 'DATA'],
              items.map((d) => [...cells(d), d.jobId, JSON.stringify(d.data)]),
            ),
          name: (d) => `deadletter/${d.id}`,
        }),
      );
    });

  deadLetters
    .command('redrive')
    .description('put dead-lettered jobs back on their queues')
    .argument('[id]', 'dead letter ID (from dead-letters list)')
    .option('--all', 'every dead letter')
    .action(async (id: string | undefined, opts: { all?: boolean }, cmd: Command) => {
      if (Boolean(id) === Boolean(opts.all))
        throw usageError('give one dead letter ID or --all', 'id');
      const request = connect(cmd);
      if (opts.all) {
        const { redriveAllDeadLetters: n } = await request<{ redriveAllDeadLetters: number }>(
          gql.REDRIVE_ALL_DEAD_LETTERS,
        );
        io.stdout(`${n} dead letter${n === 1 ? '' : 's'} redriven\n`);
        return;
      }
      const { redriveDeadLetter: d } = await request<{ redriveDeadLetter: DeadLetter }>(
        gql.REDRIVE_DEAD_LETTER,
        { id },
      );
      io.stdout(`deadletter/${d.id} redriven to ${d.queue} (job ${d.name})\n`);
    });
}
