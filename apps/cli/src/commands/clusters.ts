import type { Command } from 'commander';
import {
  applyLabelChanges,
  parseConditionFilter,
  parseEnumOption,
  parseGraceSeconds,
  parseLabelChanges,
  parseIntOption,
  parseLabelPairs,
} from '../args.js';
import * as gql from '../documents.js';
import { usageError } from '../errors.js';
import {
  clusterPrinter,
  labelList,
  print,
  render,
  table,
  type ClusterRow,
  type OutputFormat,
} from '../format.js';
import { watch } from '../live.js';
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
import { addDriftCommands } from './drift.js';

/** How often a watch re-reads over HTTP, in case the WebSocket dropped an event. */
export const WATCH_REFETCH_MS = 10_000;

const SORT_FIELDS = { name: 'NAME', created: 'CREATED_AT', 'last-report': 'LAST_REPORT' } as const;

type ListOptions = Record<string, string | boolean | undefined> & { output: OutputFormat };

/** The ClusterFilter the list flags describe (the API filters; nothing is filtered here). */
export function clusterFilter(opts: Record<string, unknown>): Record<string, unknown> {
  const filter: Record<string, unknown> = {};
  if (typeof opts.selector === 'string') filter.labelSelector = opts.selector;
  if (typeof opts.name === 'string') filter.nameContains = opts.name;
  if (typeof opts.platform === 'string')
    filter.platform = parseEnumOption(opts.platform, '--platform', PLATFORMS);
  if (typeof opts.topology === 'string')
    filter.topology = parseEnumOption(opts.topology, '--topology', TOPOLOGIES);
  if (typeof opts.condition === 'string') filter.condition = parseConditionFilter(opts.condition);
  if (opts.enabled && opts.disabled)
    throw usageError('--enabled and --disabled exclude each other');
  if (opts.inSync && opts.outOfSync)
    throw usageError('--in-sync and --out-of-sync exclude each other');
  if (opts.enabled) filter.karpenterEnabled = true;
  if (opts.disabled) filter.karpenterEnabled = false;
  if (opts.inSync) filter.inSync = true;
  if (opts.outOfSync) filter.inSync = false;
  if (opts.stale) filter.stale = true;
  if (opts.drifted) filter.drifted = true;
  if (typeof opts.managementCluster === 'string') filter.managementCluster = opts.managementCluster;
  return filter;
}

/**
 * What counts as a change worth a line: everything but the report time, which every heartbeat
 * moves (a watch that printed each heartbeat would bury the changes it is for).
 */
export function changeSignature(cluster: { status?: unknown }): string {
  const status = { ...(cluster.status as Record<string, unknown> | undefined) };
  delete status.lastReportAt;
  return JSON.stringify({ ...cluster, status });
}

/**
 * One watched object or row as it is printed after the first listing: table rows without the
 * header (kubectl -w), one compact JSON document a line (NDJSON, for `jq`), YAML documents.
 */
function watchLine<T>(format: OutputFormat, value: T, asTable: (v: T) => string): string {
  if (format === 'json') return `${JSON.stringify(value)}\n`;
  if (format === 'yaml') return `---\n${render(value, 'yaml')}`;
  return asTable(value);
}

/** `kfleet clusters`: list, get, register, label, pause, resume, reconcile, deregister, ... */
export function addClustersCommands(program: Command, context: CommandContext): void {
  const { io, connect, live, readOutput } = context;
  const clusters = program.command('clusters').description('list, inspect and register clusters');
  addDriftCommands(clusters, context);

  clusters
    .command('list')
    .alias('ls')
    .description('list clusters (every page); --watch follows changes')
    .option('-l, --selector <selector>', 'label selector, e.g. "env=prod,region in (us-east-1)"')
    .option('--name <substring>', 'name contains')
    .option('--platform <platform>', 'AWS, AZURE or CAPI')
    .option('--topology <topology>', 'STANDALONE or HOSTED')
    .option('--condition <Type=Status[:Reason]>', 'e.g. Degraded=True or Available=False:NoNodes')
    .option('--enabled', 'only clusters with Karpenter enabled')
    .option('--disabled', 'only clusters with Karpenter disabled')
    .option('--out-of-sync', 'only clusters whose observed generation lags')
    .option('--in-sync', 'only clusters that applied their desired generation')
    .option('--stale', 'only clusters without a recent report')
    .option('--drifted', 'only clusters reporting hand edits of what the fleet manages')
    .option(
      '--management-cluster <name>',
      'only clusters served from this management cluster (hosted, Cluster API)',
    )
    .option('--sort-by <field>', 'name, created or last-report', 'name')
    .option('-w, --watch', 'after the list, print each cluster again when it changes')
    .option('--timeout <duration>', 'with --watch: stop after this long (e.g. 10m; default never)')
    .addOption(readOutput())
    .action(async (opts: ListOptions, cmd: Command) => {
      const filter = clusterFilter(opts);
      const sort = String(opts.sortBy);
      if (!(sort in SORT_FIELDS))
        throw usageError(`--sort-by ${sort}: expected name, created or last-report`, '--sort-by');
      const orderBy = { field: SORT_FIELDS[sort as keyof typeof SORT_FIELDS], direction: 'ASC' };
      const request = connect(cmd);
      const list = async () => {
        const rows: (ClusterRow & { id: string })[] = [];
        for await (const nodes of pages<
          ClusterRow & { id: string },
          { clusters: Page<ClusterRow & { id: string }> }
        >(request, gql.LIST_CLUSTERS, { filter, orderBy }, (d) => d.clusters)) {
          rows.push(...nodes);
        }
        return rows;
      };
      const printer = clusterPrinter(io.now());
      if (!opts.watch) {
        const rows = await list();
        if (rows.length === 0 && (opts.output === 'table' || opts.output === 'wide'))
          io.stderr('No clusters found.\n');
        else io.stdout(print(opts.output, rows, printer));
        return;
      }
      const client = await live(cmd);
      // Each cluster is printed when what is shown of it differs from what was last printed,
      // so the periodic re-read and repeated events add no lines.
      const shown = new Map<string, string>();
      let first = true;
      await watch<(ClusterRow & { id: string })[]>(
        {
          client,
          query: gql.CLUSTER_CHANGED,
          variables: { filter },
          pick: (d) => [d.clusterChanged as ClusterRow & { id: string }],
          fetch: list,
          pollMs: WATCH_REFETCH_MS,
          timeout: opts.timeout as string | undefined,
        },
        (rows) => {
          const changed = rows.filter((r) => shown.get(r.id) !== changeSignature(r));
          for (const r of changed) shown.set(r.id, changeSignature(r));
          if (first) {
            first = false;
            if (opts.output === 'json' || opts.output === 'yaml')
              for (const r of rows) io.stdout(watchLine(opts.output, r, () => ''));
            else if (rows.length) io.stdout(print(opts.output, rows, printer));
            return;
          }
          for (const r of changed)
            io.stdout(
              watchLine(opts.output, r, (v) =>
                opts.output === 'name'
                  ? `${printer.name(v)}\n`
                  : print(opts.output, [v], printer).split('\n').slice(1).join('\n'),
              ),
            );
        },
      );
    });

  clusters
    .command('get')
    .description('show one cluster: desired state, NodePools, status; --watch follows changes')
    .argument('<cluster>', 'cluster name or ID')
    .option('-w, --watch', 'print the cluster again each time it changes')
    .option('--timeout <duration>', 'with --watch: stop after this long (e.g. 10m; default never)')
    .option(
      '--show-sources',
      'the effective desired state field by field, with the profile or override that set it',
    )
    .addOption(readOutput('yaml'))
    .action(
      async (
        ref: string,
        opts: { output: OutputFormat; watch?: boolean; timeout?: string; showSources?: boolean },
        cmd: Command,
      ) => {
        const request = connect(cmd);
        const id = await resolveCluster(request, ref);
        if (opts.showSources) {
          if (opts.watch) throw usageError('--show-sources does not --watch', '--show-sources');
          const { cluster } = await request<{ cluster: SourcesView }>(gql.GET_CLUSTER_SOURCES, {
            id,
          });
          // A table of sources unless -o json|yaml is asked for (get's own default is YAML).
          const asked = cmd.getOptionValueSource('output') !== 'default';
          io.stdout(
            asked && (opts.output === 'json' || opts.output === 'yaml')
              ? render(cluster, opts.output)
              : sourcesTable(cluster),
          );
          return;
        }
        const get = async () =>
          (await request<{ cluster: ClusterRow & { id: string } }>(gql.GET_CLUSTER, { id }))
            .cluster;
        const printer = clusterPrinter(io.now());
        if (!opts.watch) {
          io.stdout(print(opts.output, await get(), printer));
          return;
        }
        const client = await live(cmd);
        let last: string | undefined;
        await watch<ClusterRow & { id: string }>(
          {
            client,
            query: gql.CLUSTER_DETAIL_CHANGED,
            // The API filters by name substring; the ID check below keeps only this cluster.
            variables: { filter: { nameContains: (await get()).name } },
            pick: (d) => d.clusterChanged as ClusterRow & { id: string },
            fetch: get,
            pollMs: WATCH_REFETCH_MS,
            timeout: opts.timeout,
          },
          (cluster) => {
            if (cluster.id !== id) return;
            const text = changeSignature(cluster);
            if (text === last) return;
            const header = last === undefined;
            last = text;
            io.stdout(
              watchLine(opts.output, cluster, (v) => {
                if (opts.output === 'name') return `${printer.name(v)}\n`;
                const out = print(opts.output, [v], printer);
                return header ? out : out.split('\n').slice(1).join('\n');
              }),
            );
          },
        );
      },
    );

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
      '--capi-cluster <name>',
      'CAPI: the Cluster (cluster.x-k8s.io) to run Karpenter for; on OpenShift, the infrastructure name',
    )
    .option(
      '--capi-namespace <namespace>',
      'CAPI: the Cluster’s namespace on the management cluster (default openshift-cluster-api)',
    )
    .option('--infrastructure-provider <name>', 'CAPI: the infrastructure provider (default aws)')
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
          capiCluster?: string;
          capiNamespace?: string;
          infrastructureProvider?: string;
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
          // Validated by the API, which names the field in its refusal.
          ...(opts.capiCluster ? { clusterApiName: opts.capiCluster } : {}),
          ...(opts.capiNamespace ? { clusterApiNamespace: opts.capiNamespace } : {}),
          ...(opts.infrastructureProvider
            ? { infrastructureProvider: opts.infrastructureProvider }
            : {}),
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
        await emitManifest(r.bootstrapManifest, opts.manifestOut);
      },
    );

  async function emitManifest(manifest: string, out: string | undefined): Promise<void> {
    if (out) {
      await io.writeFile(out, manifest);
      io.stdout(`bootstrap manifest written to ${out}\n`);
    } else {
      io.stdout(manifest);
    }
  }

  clusters
    .command('rotate-credentials')
    .description(
      'new sidecar credentials (ADMIN); the old ones work until the grace period ends. The new bootstrap manifest is shown this once',
    )
    .argument('<cluster>', 'cluster name or ID')
    .option('--manifest-out <file>', 'write the manifest here (mode 0600) instead of stdout')
    .option(
      '--grace <duration>',
      "how long the previous credentials keep working (0 = end them and cut their connections now; up to 7d; default: the API's)",
    )
    .action(async (ref: string, opts: { manifestOut?: string; grace?: string }, cmd: Command) => {
      const grace = opts.grace === undefined ? undefined : parseGraceSeconds(opts.grace);
      const request = connect(cmd);
      const id = await resolveCluster(request, ref);
      const { rotateClusterCredentials: r } = await request<{
        rotateClusterCredentials: {
          cluster: { name: string };
          bootstrapManifest: string;
          previousValidUntil: string;
        };
      }>(gql.ROTATE_CREDENTIALS, { id, grace });
      io.stderr(
        `cluster/${r.cluster.name} credentials rotated; the previous ones stop working at ${r.previousValidUntil}\n` +
          'WARNING: the bootstrap manifest holds the new sidecar credentials. They are shown this ' +
          'once; apply the manifest to the cluster before the previous credentials expire.\n',
      );
      await emitManifest(r.bootstrapManifest, opts.manifestOut);
    });

  clusters
    .command('deregister')
    .description(
      'remove a cluster from the fleet (ADMIN): its credentials stop working, its history goes',
    )
    .argument('<cluster>', 'cluster name or ID')
    .option('--yes', 'confirm: this cannot be undone')
    .action(async (ref: string, opts: { yes?: boolean }, cmd: Command) => {
      if (!opts.yes)
        throw usageError(
          `deregistering ${ref} cannot be undone; repeat with --yes to confirm`,
          '--yes',
        );
      const request = connect(cmd);
      const id = await resolveCluster(request, ref);
      const { deregisterCluster: c } = await request<{ deregisterCluster: { name: string } }>(
        gql.DEREGISTER_CLUSTER,
        { id },
      );
      io.stdout(`cluster/${c.name} deregistered\n`);
    });

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

  clusters
    .command('reset')
    .description(
      "clear the cluster's own override of a field, so its profiles' value (or the default) applies again",
    )
    .argument('<cluster>', 'cluster name or ID')
    .argument('[field]', 'a setting (logLevel, enabled, ...) or nodePools.<name>')
    .option('--all', 'clear every override at once (one desired-state change)')
    .option('--expected-generation <n>', 'refuse (CONFLICT) if the cluster moved past it')
    .action(
      async (
        ref: string,
        field: string | undefined,
        opts: { expectedGeneration?: string; all?: boolean },
        cmd: Command,
      ) => {
        if (opts.all ? field !== undefined : field === undefined)
          throw usageError('give a field, or --all (not both)', 'field');
        const request = connect(cmd);
        const id = await resolveCluster(request, ref);
        const expected = opts.expectedGeneration
          ? {
              expectedGeneration: parseIntOption(opts.expectedGeneration, '--expected-generation'),
            }
          : {};
        if (field === undefined) {
          const { resetClusterOverrides: c } = await request<{
            resetClusterOverrides: ClusterAck;
          }>(gql.RESET_CLUSTER_OVERRIDES, { clusterId: id, ...expected });
          io.stdout(ack(c, 'every override cleared'));
          return;
        }
        const { resetClusterOverride: c } = await request<{ resetClusterOverride: ClusterAck }>(
          gql.RESET_CLUSTER_OVERRIDE,
          { clusterId: id, field, ...expected },
        );
        io.stdout(ack(c, `override of ${field} cleared`));
      },
    );

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

interface SourcesView {
  name: string;
  karpenter: { generation: number };
  effectiveState: {
    fields: {
      field: string;
      value: unknown;
      source: string;
      profile: string | null;
      profileRevision: number | null;
    }[];
    profiles: { name: string; priority: number; revision: number }[];
    overrides: string[];
    ignored: { field: string; profile: string; reason: string }[];
  };
}

/** One row a field: its value (JSON, cut at 60 characters) and where it came from. */
function sourcesTable(cluster: SourcesView): string {
  const e = cluster.effectiveState;
  const cut = (v: unknown) => {
    const text = JSON.stringify(v) ?? 'null';
    return text.length > 60 ? `${text.slice(0, 57)}...` : text;
  };
  let out =
    `cluster/${cluster.name} generation ${cluster.karpenter.generation}; profiles: ` +
    (e.profiles.length
      ? e.profiles.map((p) => `${p.name}@r${p.revision} (priority ${p.priority})`).join(', ')
      : 'none') +
    '\n' +
    table(
      ['FIELD', 'VALUE', 'SOURCE'],
      e.fields.map((f) => [
        f.field,
        cut(f.value),
        f.source === 'profile' ? `profile/${f.profile}@r${f.profileRevision}` : f.source,
      ]),
    );
  for (const i of e.ignored) out += `ignored: ${i.field} of profile/${i.profile}: ${i.reason}\n`;
  return out;
}
