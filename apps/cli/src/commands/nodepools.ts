import type { Command } from 'commander';
import { parseIntOption, parseNodePoolDocument } from '../args.js';
import * as gql from '../documents.js';
import { usageError } from '../errors.js';
import { age, print, table, type OutputFormat } from '../format.js';
import { ack, resolveCluster, type ClusterAck, type CommandContext } from './context.js';

/** `kfleet nodepools`: apply, delete, list. */
export function addNodepoolsCommands(
  program: Command,
  { io, connect, readOutput }: CommandContext,
): void {
  const nodepools = program
    .command('nodepools')
    .description('NodePools the fleet keeps on a cluster');

  nodepools
    .command('apply')
    .description('create or replace a NodePool from a manifest or a bare spec')
    .argument('<cluster>', 'cluster name or ID')
    .requiredOption('-f, --filename <file>', 'NodePool YAML or JSON ("-" for stdin)')
    .option('--name <name>', 'NodePool name (overrides metadata.name; required for a bare spec)')
    .option('--expected-generation <n>', 'fail with CONFLICT unless the generation is still n')
    .action(
      async (
        ref: string,
        opts: { filename: string; name?: string; expectedGeneration?: string },
        cmd: Command,
      ) => {
        let text: string;
        try {
          text = await io.readFile(opts.filename);
        } catch (err) {
          throw usageError(`cannot read ${opts.filename}: ${(err as Error).message}`, '-f');
        }
        const pool = parseNodePoolDocument(text, opts.name);
        const input: Record<string, unknown> = { name: pool.name, spec: pool.spec };
        if (opts.expectedGeneration)
          input.expectedGeneration = parseIntOption(
            opts.expectedGeneration,
            '--expected-generation',
            1,
          );
        const request = connect(cmd);
        const id = await resolveCluster(request, ref);
        const { upsertNodePool: c } = await request<{ upsertNodePool: ClusterAck }>(
          gql.UPSERT_NODEPOOL,
          { id, input },
        );
        io.stdout(ack(c, `nodepool/${pool.name} applied`));
      },
    );

  nodepools
    .command('delete')
    .description('remove a NodePool from the desired state')
    .argument('<cluster>', 'cluster name or ID')
    .argument('<name>', 'NodePool name')
    .option('--expected-generation <n>', 'fail with CONFLICT unless the generation is still n')
    .action(
      async (ref: string, name: string, opts: { expectedGeneration?: string }, cmd: Command) => {
        const expectedGeneration = opts.expectedGeneration
          ? parseIntOption(opts.expectedGeneration, '--expected-generation', 1)
          : undefined;
        const request = connect(cmd);
        const id = await resolveCluster(request, ref);
        const { deleteNodePool: c } = await request<{ deleteNodePool: ClusterAck }>(
          gql.DELETE_NODEPOOL,
          { id, name, expectedGeneration },
        );
        io.stdout(ack(c, `nodepool/${name} deleted`));
      },
    );

  nodepools
    .command('list')
    .alias('ls')
    .description("a cluster's NodePools")
    .argument('<cluster>', 'cluster name or ID')
    .addOption(readOutput())
    .action(async (ref: string, opts: { output: OutputFormat }, cmd: Command) => {
      const request = connect(cmd);
      const id = await resolveCluster(request, ref);
      const { cluster } = await request<{
        cluster: { nodePools: { name: string; updatedAt: string; spec: unknown }[] };
      }>(gql.GET_CLUSTER, { id });
      const now = io.now();
      io.stdout(
        print(opts.output, cluster.nodePools, {
          table: (items) =>
            table(
              ['NAME', 'UPDATED'],
              items.map((p) => [p.name, age(p.updatedAt, now)]),
            ),
          wide: (items) =>
            table(
              ['NAME', 'UPDATED', 'SPEC'],
              items.map((p) => [p.name, age(p.updatedAt, now), JSON.stringify(p.spec)]),
            ),
          name: (p) => `nodepool/${p.name}`,
        }),
      );
    });
}
