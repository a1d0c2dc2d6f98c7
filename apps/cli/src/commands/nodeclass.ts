import type { Command } from 'commander';
import { parse } from 'yaml';
import { parseLabelPairs } from '../args.js';
import * as gql from '../documents.js';
import { usageError } from '../errors.js';
import { print, table, type OutputFormat } from '../format.js';
import { ack, collect, resolveCluster, type ClusterAck, type CommandContext } from './context.js';

/** The fields of NodeClassOverridesInput a file may carry. */
const OVERRIDE_FIELDS = ['blockDeviceMappings', 'tags', 'metadataOptions', 'kubelet'] as const;

type Overrides = Partial<Record<(typeof OVERRIDE_FIELDS)[number], unknown>>;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** An overrides file: a YAML or JSON object with only the override fields. */
export function parseOverridesDocument(text: string): Overrides {
  let value: unknown;
  try {
    value = parse(text);
  } catch (err) {
    throw usageError(`invalid YAML: ${(err as Error).message}`, '-f');
  }
  if (value == null) return {};
  if (!isObject(value)) throw usageError('expected an object of NodeClass overrides', '-f');
  const unknown = Object.keys(value).find(
    (k) => !(OVERRIDE_FIELDS as readonly string[]).includes(k),
  );
  if (unknown)
    throw usageError(
      `${unknown}: not a NodeClass override (expected ${OVERRIDE_FIELDS.join(', ')})`,
      unknown,
    );
  return value;
}

/** `kfleet nodeclass`: the per-cluster overrides of the NodeClass the sidecar renders. */
export function addNodeclassCommands(
  program: Command,
  { io, connect, readOutput }: CommandContext,
): void {
  const nodeclass = program
    .command('nodeclass')
    .description("overrides of the NodeClass the sidecar renders from the cluster's own machines");

  nodeclass
    .command('show')
    .description("a cluster's NodeClass overrides")
    .argument('<cluster>', 'cluster name or ID')
    .addOption(readOutput('yaml'))
    .action(async (ref: string, opts: { output: OutputFormat }, cmd: Command) => {
      const request = connect(cmd);
      const id = await resolveCluster(request, ref);
      const { cluster } = await request<{
        cluster: { name: string; karpenter: { nodeClassOverrides: Record<string, unknown> } };
      }>(gql.NODECLASS_OVERRIDES, { id });
      const overrides = cluster.karpenter.nodeClassOverrides;
      io.stdout(
        print<Record<string, unknown>>(opts.output, overrides, {
          table: (items) =>
            table(
              ['CLUSTER', 'OVERRIDE', 'VALUE'],
              items.flatMap((o) =>
                Object.entries(o).map(([k, v]) => [cluster.name, k, JSON.stringify(v)]),
              ),
            ),
          name: () => `nodeclass/${cluster.name}`,
        }),
      );
    });

  nodeclass
    .command('set')
    .description(
      'replace the overrides with a file, or change them with --tag (read, changed, written back at the same generation)',
    )
    .argument('<cluster>', 'cluster name or ID')
    .option(
      '-f, --filename <file>',
      'YAML or JSON: blockDeviceMappings, tags, metadataOptions, kubelet ("-" for stdin)',
    )
    .option('--tag <key=value>', 'tag merged over the overrides (repeatable)', collect)
    .option('--clear', 'start from no overrides at all')
    .action(
      async (
        ref: string,
        opts: { filename?: string; tag?: string[]; clear?: boolean },
        cmd: Command,
      ) => {
        if (!opts.filename && !opts.tag && !opts.clear)
          throw usageError('give -f <file>, --tag key=value or --clear');
        if (opts.filename && opts.clear) throw usageError('-f and --clear exclude each other');
        let fromFile: Overrides | undefined;
        if (opts.filename) {
          let text: string;
          try {
            text = await io.readFile(opts.filename);
          } catch (err) {
            throw usageError(`cannot read ${opts.filename}: ${(err as Error).message}`, '-f');
          }
          fromFile = parseOverridesDocument(text);
        }
        const tags = opts.tag ? parseLabelPairs(opts.tag, '--tag') : undefined;
        const request = connect(cmd);
        const id = await resolveCluster(request, ref);
        let base: Overrides = fromFile ?? {};
        let expectedGeneration: number | undefined;
        if (!fromFile && !opts.clear) {
          // --tag alone changes the current overrides; the generation it read guards the write.
          const { cluster } = await request<{
            cluster: { karpenter: { generation: number; nodeClassOverrides: Overrides } };
          }>(gql.NODECLASS_OVERRIDES, { id });
          base = cluster.karpenter.nodeClassOverrides;
          expectedGeneration = cluster.karpenter.generation;
        }
        const input: Record<string, unknown> = { ...base };
        if (tags) input.tags = { ...(isObject(base.tags) ? base.tags : {}), ...tags };
        if (expectedGeneration !== undefined) input.expectedGeneration = expectedGeneration;
        const { setNodeClassOverrides: c } = await request<{ setNodeClassOverrides: ClusterAck }>(
          gql.SET_NODECLASS_OVERRIDES,
          { id, input },
        );
        io.stdout(ack(c, 'nodeclass overrides set'));
      },
    );
}
