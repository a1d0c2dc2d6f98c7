import type { Command } from 'commander';
import { applyLabelChanges, parseEnumOption, parseLabelChanges, parseLabelPairs } from '../args.js';
import * as gql from '../documents.js';
import { usageError } from '../errors.js';
import { clusterTable, labelList, render, type ClusterRow } from '../format.js';
import {
  PLATFORMS,
  TOPOLOGIES,
  collect,
  ack,
  pages,
  resolveCluster,
  type Page,
  type ClusterAck,
  type CommandContext,
} from './context.js';

/** `kfleet clusters`: list, get, register, label, pause, resume, reconcile. */
export function addClustersCommands(
  program: Command,
  { io, connect, outputOption }: CommandContext,
): void {
  const clusters = program.command('clusters').description('list, inspect and register clusters');

  clusters
    .command('list')
    .alias('ls')
    .description('list clusters (every page)')
    .option('-l, --selector <selector>', 'label selector, e.g. "env=prod,region in (us-east-1)"')
    .option('--name <substring>', 'name contains')
    .option('--platform <platform>', 'AWS, AZURE or CAPI')
    .option('--topology <topology>', 'STANDALONE or HOSTED')
    .option('--enabled', 'only clusters with Karpenter enabled')
    .option('--disabled', 'only clusters with Karpenter disabled')
    .option('--out-of-sync', 'only clusters whose observed generation lags')
    .option('--in-sync', 'only clusters that applied their desired generation')
    .option('--stale', 'only clusters without a recent report')
    .addOption(outputOption(['table', 'json'], 'table'))
    .action(async (opts: Record<string, string | boolean | undefined>, cmd: Command) => {
      const filter: Record<string, unknown> = {};
      if (typeof opts.selector === 'string') filter.labelSelector = opts.selector;
      if (typeof opts.name === 'string') filter.nameContains = opts.name;
      if (typeof opts.platform === 'string')
        filter.platform = parseEnumOption(opts.platform, '--platform', PLATFORMS);
      if (typeof opts.topology === 'string')
        filter.topology = parseEnumOption(opts.topology, '--topology', TOPOLOGIES);
      if (opts.enabled && opts.disabled)
        throw usageError('--enabled and --disabled exclude each other');
      if (opts.inSync && opts.outOfSync)
        throw usageError('--in-sync and --out-of-sync exclude each other');
      if (opts.enabled) filter.karpenterEnabled = true;
      if (opts.disabled) filter.karpenterEnabled = false;
      if (opts.inSync) filter.inSync = true;
      if (opts.outOfSync) filter.inSync = false;
      if (opts.stale) filter.stale = true;
      const rows: ClusterRow[] = [];
      const request = connect(cmd);
      for await (const nodes of pages<ClusterRow, { clusters: Page<ClusterRow> }>(
        request,
        gql.LIST_CLUSTERS,
        { filter },
        (d) => d.clusters,
      )) {
        rows.push(...nodes);
      }
      if (opts.output === 'json') io.stdout(render(rows, 'json'));
      else if (rows.length === 0) io.stderr('No clusters found.\n');
      else io.stdout(clusterTable(rows, io.now()));
    });

  clusters
    .command('get')
    .description('show one cluster: desired state, NodePools, status')
    .argument('<cluster>', 'cluster name or ID')
    .addOption(outputOption(['yaml', 'json'], 'yaml'))
    .action(async (ref: string, opts: { output: 'yaml' | 'json' }, cmd: Command) => {
      const request = connect(cmd);
      const id = await resolveCluster(request, ref);
      const { cluster } = await request<{ cluster: unknown }>(gql.GET_CLUSTER, { id });
      io.stdout(render(cluster, opts.output));
    });

  clusters
    .command('register')
    .description('register a cluster and get its sidecar bootstrap manifest (ADMIN)')
    .argument('<name>', 'DNS-1123 label, unique in the fleet')
    .requiredOption('--platform <platform>', 'AWS, AZURE or CAPI')
    .requiredOption('--region <region>', 'cloud region, e.g. us-east-1')
    .option('--topology <topology>', 'STANDALONE or HOSTED', 'STANDALONE')
    .option('--label <key=value>', 'label (repeatable)', collect)
    .option('--infra-id <id>', 'infrastructure ID')
    .option('--management-cluster <name>', 'HOSTED: the management cluster')
    .option('--hcp-namespace <namespace>', 'HOSTED: the hosted control plane namespace')
    .option(
      '--manifest-out <file>',
      'write the bootstrap manifest here (mode 0600) instead of stdout',
    )
    .action(
      async (
        name: string,
        opts: {
          platform: string;
          region: string;
          topology: string;
          label?: string[];
          infraId?: string;
          managementCluster?: string;
          hcpNamespace?: string;
          manifestOut?: string;
        },
        cmd: Command,
      ) => {
        const input = {
          name,
          platform: parseEnumOption(opts.platform, '--platform', PLATFORMS),
          region: opts.region,
          topology: parseEnumOption(opts.topology, '--topology', TOPOLOGIES),
          labels: parseLabelPairs(opts.label ?? []),
          ...(opts.infraId ? { infraID: opts.infraId } : {}),
          ...(opts.managementCluster ? { managementCluster: opts.managementCluster } : {}),
          ...(opts.hcpNamespace ? { hcpNamespace: opts.hcpNamespace } : {}),
        };
        const { registerCluster: r } = await connect(cmd)<{
          registerCluster: {
            cluster: { id: string; uid: string; name: string };
            bootstrapManifest: string;
          };
        }>(gql.REGISTER_CLUSTER, { input });
        io.stderr(
          `cluster/${r.cluster.name} registered (id ${r.cluster.id}, uid ${r.cluster.uid})\n` +
            'WARNING: the bootstrap manifest holds the sidecar credentials (report token, Redis ' +
            'password). They are shown this once and cannot be retrieved again; keep the manifest ' +
            'secret and apply it to the cluster.\n',
        );
        if (opts.manifestOut) {
          await io.writeFile(opts.manifestOut, r.bootstrapManifest);
          io.stdout(`bootstrap manifest written to ${opts.manifestOut}\n`);
        } else {
          io.stdout(r.bootstrapManifest);
        }
      },
    );

  clusters
    .command('label')
    .description('set (key=value) or remove (key-) labels')
    .argument('<cluster>', 'cluster name or ID')
    .argument('<changes...>', 'key=value to set, key- to remove')
    .action(async (ref: string, args: string[], _opts: unknown, cmd: Command) => {
      const changes = parseLabelChanges(args);
      const request = connect(cmd);
      const id = await resolveCluster(request, ref);
      const { cluster } = await request<{ cluster: { labels: Record<string, string> } }>(
        gql.CLUSTER_LABELS_AND_GATES,
        { id },
      );
      const { updateClusterLabels: c } = await request<{
        updateClusterLabels: { name: string; labels: Record<string, string> };
      }>(gql.UPDATE_LABELS, { id, labels: applyLabelChanges(cluster.labels, changes) });
      io.stdout(`cluster/${c.name} labeled: ${labelList(c.labels)}\n`);
    });

  const simpleClusterMutation = (
    verb: string,
    document: string,
    field: string,
    what: string,
    done: string,
  ) =>
    clusters
      .command(verb)
      .description(what)
      .argument('<cluster>', 'cluster name or ID')
      .action(async (ref: string, _opts: unknown, cmd: Command) => {
        const request = connect(cmd);
        const id = await resolveCluster(request, ref);
        const data = await request<Record<string, ClusterAck>>(document, { id });
        io.stdout(ack(data[field]!, done));
      });
  simpleClusterMutation(
    'pause',
    gql.PAUSE_CLUSTER,
    'pauseCluster',
    'stop reconciling: the sidecar leaves the cluster as it is',
    'paused',
  );
  simpleClusterMutation(
    'resume',
    gql.RESUME_CLUSTER,
    'resumeCluster',
    'reconcile again',
    'resumed',
  );
  simpleClusterMutation(
    'reconcile',
    gql.RECONCILE_CLUSTER,
    'reconcileCluster',
    'send the current desired state again',
    'reconcile requested',
  );
}
