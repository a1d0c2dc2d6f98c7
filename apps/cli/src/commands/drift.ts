import type { Command } from 'commander';
import { parseEnumOption, parseIntOption } from '../args.js';
import * as gql from '../documents.js';
import { print, table, type OutputFormat, type Printer } from '../format.js';
import {
  ack,
  pages,
  resolveCluster,
  type ClusterAck,
  type CommandContext,
  type Page,
} from './context.js';

export interface DriftedCluster {
  id: string;
  name: string;
  karpenter: { driftPolicy: string };
  status: {
    stale: boolean;
    drift:
      | {
          kind: string;
          namespace: string | null;
          name: string;
          change: string;
          moreFields: number;
          detectedAt: string;
          correctedAt: string | null;
          fields: { path: string; manager: string | null }[];
        }[]
      | null;
  };
}

/** One line per open drift entry (an object), the cluster's policy beside it. */
export const driftPrinter: Printer<DriftedCluster> = {
  table: (clusters) =>
    table(
      ['CLUSTER', 'POLICY', 'OBJECT', 'CHANGE', 'FIELDS', 'DETECTED'],
      clusters.flatMap((c) =>
        (c.status.drift ?? [])
          .filter((e) => !e.correctedAt)
          .map((e) => [
            c.name,
            c.karpenter.driftPolicy,
            `${e.kind}/${e.namespace ? `${e.namespace}/` : ''}${e.name}`,
            e.change,
            [
              ...e.fields.map((f) => `${f.path}${f.manager ? ` (${f.manager})` : ''}`),
              ...(e.moreFields ? [`+${e.moreFields} more`] : []),
            ].join(', ') || '-',
            e.detectedAt,
          ]),
      ),
    ),
  name: (c) => `cluster/${c.name}`,
};

/** `kfleet clusters drift` and `kfleet clusters drift-policy`. */
export function addDriftCommands(clusters: Command, context: CommandContext): void {
  const { io, connect, readOutput } = context;
  clusters
    .command('drift')
    .description(
      'list clusters whose objects were hand-edited and not put back (Drifted=True), with the fields and who changed them',
    )
    .option('-l, --selector <selector>', 'label selector, e.g. "env=prod"')
    .addOption(readOutput())
    .action(async (opts: { selector?: string; output: OutputFormat }, cmd: Command) => {
      const filter: Record<string, unknown> = { drifted: true };
      if (opts.selector) filter.labelSelector = opts.selector;
      const request = connect(cmd);
      const rows: DriftedCluster[] = [];
      for await (const nodes of pages<DriftedCluster, { clusters: Page<DriftedCluster> }>(
        request,
        gql.LIST_DRIFTED_CLUSTERS,
        { filter, orderBy: { field: 'NAME', direction: 'ASC' } },
        (d) => d.clusters,
      ))
        rows.push(...nodes);
      if (rows.length === 0 && (opts.output === 'table' || opts.output === 'wide'))
        io.stderr('No drifted clusters.\n');
      else io.stdout(print(opts.output, rows, driftPrinter));
    });

  clusters
    .command('drift-policy')
    .description(
      "set what the cluster's sidecar does with hand edits: CORRECT puts them back at once, REPORT leaves them and reports",
    )
    .argument('<cluster>', 'cluster name or ID')
    .argument('<policy>', 'CORRECT or REPORT')
    .option('--expected-generation <n>', 'fail with CONFLICT unless the generation is still n')
    .action(
      async (ref: string, policy: string, opts: { expectedGeneration?: string }, cmd: Command) => {
        const driftPolicy = parseEnumOption(policy, '<policy>', ['CORRECT', 'REPORT'] as const);
        const input: Record<string, unknown> = { driftPolicy };
        if (opts.expectedGeneration)
          input.expectedGeneration = parseIntOption(
            opts.expectedGeneration,
            '--expected-generation',
            1,
          );
        const request = connect(cmd);
        const id = await resolveCluster(request, ref);
        const { setKarpenter: c } = await request<{ setKarpenter: ClusterAck }>(gql.SET_KARPENTER, {
          id,
          input,
        });
        io.stdout(ack(c, `drift policy ${driftPolicy}`));
      },
    );
}
