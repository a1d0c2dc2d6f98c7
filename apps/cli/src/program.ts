import { Command, CommanderError, Option } from 'commander';
import {
  applyLabelChanges,
  isClusterId,
  parseCasMode,
  parseDuration,
  parseEnumOption,
  parseFeatureGates,
  parseIntOption,
  parseLabelChanges,
  parseLabelPairs,
  parseLogLevel,
  parseNodePoolDocument,
  parseWaves,
} from './args.js';
import { graphqlRequest, type Request } from './client.js';
import * as gql from './documents.js';
import { CliError, EXIT, formatError, usageError } from './errors.js';
import { age, clusterTable, labelList, render, table, type ClusterRow } from './format.js';

export const DEFAULT_API_URL = 'http://127.0.0.1:4000';

/** Everything the CLI touches outside itself, so tests can drive it in process. */
export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
  env: Record<string, string | undefined>;
  readFile(path: string): Promise<string>;
  writeFile(path: string, data: string): Promise<void>;
  now(): Date;
  fetch?: typeof fetch;
}

interface GlobalOptions {
  api?: string;
  token?: string;
}

interface Page<T> {
  nodes: T[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

interface ClusterAck {
  id: string;
  name: string;
  inSync: boolean;
  karpenter: {
    enabled: boolean;
    paused: boolean;
    generation: number;
    clusterAutoscalerMode: string;
  };
  status: { observedGeneration: number };
}

interface Token {
  id: string;
  name: string;
  role: string;
  labelSelector: string | null;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

interface RolloutRow {
  id: string;
  state: string;
  selector: string;
  currentWave: number;
  createdAt: string;
  reason: string | null;
  counts: { total: number; healthy: number; failed: number; applying: number; skipped: number };
}

const PAGE_SIZE = 100;
const ROLES = ['VIEWER', 'OPERATOR', 'ADMIN'] as const;
const PLATFORMS = ['AWS', 'AZURE', 'CAPI'] as const;
const TOPOLOGIES = ['STANDALONE', 'HOSTED'] as const;
const ROLLOUT_STATES = ['RUNNING', 'PAUSED', 'FAILED', 'COMPLETED', 'ABORTED'] as const;

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** Follows a Relay connection to its end; `pick` digs the connection out of the response. */
async function* pages<T, R>(
  request: Request,
  query: string,
  variables: Record<string, unknown>,
  pick: (data: R) => Page<T>,
): AsyncGenerator<T[]> {
  let after: string | null = null;
  for (;;) {
    const page = pick(await request<R>(query, { ...variables, first: PAGE_SIZE, after }));
    yield page.nodes;
    if (!page.pageInfo.hasNextPage || !page.pageInfo.endCursor) return;
    after = page.pageInfo.endCursor;
  }
}

/**
 * A cluster argument to the ID mutations take. Names go through `nameContains` and an exact
 * match, since the API has no lookup by name; a substring can match many, so page until found.
 */
export async function resolveCluster(request: Request, ref: string): Promise<string> {
  if (isClusterId(ref)) return ref;
  const found = pages<
    { id: string; name: string },
    { clusters: Page<{ id: string; name: string }> }
  >(request, gql.FIND_CLUSTERS_BY_NAME, { filter: { nameContains: ref } }, (d) => d.clusters);
  for await (const nodes of found) {
    const hit = nodes.find((c) => c.name === ref);
    if (hit) return hit.id;
  }
  throw new CliError(`cluster ${ref} not found`, 'NOT_FOUND');
}

const ack = (c: ClusterAck, what: string): string =>
  `cluster/${c.name} ${what} (generation ${c.karpenter.generation}, observed ${c.status.observedGeneration})\n`;

export function buildProgram(io: Io): Command {
  const program = new Command('kfleet')
    .description('Karpenter Fleet: desired Karpenter state of a fleet of OpenShift clusters')
    .option('--api <url>', `fleet API base URL (env KFLEET_API_URL, default ${DEFAULT_API_URL})`)
    .option('--token <token>', 'API token (env KFLEET_TOKEN)')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout(s),
      writeErr: (s) => io.stderr(s),
    });

  const connect = (cmd: Command): Request => {
    const globals = cmd.optsWithGlobals<GlobalOptions>();
    const token = globals.token ?? io.env.KFLEET_TOKEN;
    const request = graphqlRequest({
      apiUrl: globals.api ?? io.env.KFLEET_API_URL ?? DEFAULT_API_URL,
      ...(token ? { token } : {}),
      ...(io.fetch ? { fetch: io.fetch } : {}),
    });
    if (token) return request;
    return async <T>(query: string, variables?: Record<string, unknown>) => {
      try {
        return await request<T>(query, variables);
      } catch (err) {
        if (err instanceof CliError && err.code === 'UNAUTHENTICATED') {
          throw new CliError(`${err.message}; set KFLEET_TOKEN or pass --token`, err.code);
        }
        throw err;
      }
    };
  };

  const outputOption = (choices: string[], fallback: string) =>
    new Option('-o, --output <format>', 'output format').choices(choices).default(fallback);

  // ─── clusters ──────────────────────────────────────────────────────────────────────────────
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

  // ─── karpenter ─────────────────────────────────────────────────────────────────────────────
  const karpenter = program.command('karpenter').description('enable or disable Karpenter');
  for (const verb of ['enable', 'disable'] as const) {
    karpenter
      .command(verb)
      .description(`${verb} Karpenter on a cluster`)
      .argument('<cluster>', 'cluster name or ID')
      .option('--cas <mode>', 'Cluster Autoscaler: disable, keep or migrate')
      .option('--log-level <level>', 'debug, info or error')
      .option(
        '--feature-gate <Name=bool>',
        'feature gate, merged over the current ones (repeatable)',
        collect,
      )
      .option('--expected-generation <n>', 'fail with CONFLICT unless the generation is still n')
      .action(
        async (
          ref: string,
          opts: {
            cas?: string;
            logLevel?: string;
            featureGate?: string[];
            expectedGeneration?: string;
          },
          cmd: Command,
        ) => {
          const input: Record<string, unknown> = { enabled: verb === 'enable' };
          if (opts.cas) input.clusterAutoscalerMode = parseCasMode(opts.cas);
          if (opts.logLevel) input.logLevel = parseLogLevel(opts.logLevel);
          if (opts.expectedGeneration)
            input.expectedGeneration = parseIntOption(
              opts.expectedGeneration,
              '--expected-generation',
              1,
            );
          const gates = opts.featureGate ? parseFeatureGates(opts.featureGate) : undefined;
          const request = connect(cmd);
          const id = await resolveCluster(request, ref);
          if (gates) {
            // The API replaces the whole map; merging here keeps `--feature-gate X=true` additive.
            const { cluster } = await request<{
              cluster: { karpenter: { featureGates: Record<string, boolean> } };
            }>(gql.CLUSTER_LABELS_AND_GATES, { id });
            input.featureGates = { ...cluster.karpenter.featureGates, ...gates };
          }
          const { setKarpenter: c } = await request<{ setKarpenter: ClusterAck }>(
            gql.SET_KARPENTER,
            {
              id,
              input,
            },
          );
          io.stdout(
            ack(c, `karpenter ${verb}d, cluster autoscaler ${c.karpenter.clusterAutoscalerMode}`),
          );
        },
      );
  }

  // ─── nodepools ─────────────────────────────────────────────────────────────────────────────
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
    .addOption(outputOption(['table', 'json', 'yaml'], 'table'))
    .action(async (ref: string, opts: { output: 'table' | 'json' | 'yaml' }, cmd: Command) => {
      const request = connect(cmd);
      const id = await resolveCluster(request, ref);
      const { cluster } = await request<{
        cluster: { nodePools: { name: string; updatedAt: string; spec: unknown }[] };
      }>(gql.GET_CLUSTER, { id });
      if (opts.output !== 'table') io.stdout(render(cluster.nodePools, opts.output));
      else
        io.stdout(
          table(
            ['NAME', 'UPDATED'],
            cluster.nodePools.map((p) => [p.name, age(p.updatedAt, io.now())]),
          ),
        );
    });

  // ─── summary ───────────────────────────────────────────────────────────────────────────────
  program
    .command('summary')
    .description('fleet-wide counts over the clusters your token may see')
    .addOption(outputOption(['table', 'json', 'yaml'], 'table'))
    .action(async (opts: { output: 'table' | 'json' | 'yaml' }, cmd: Command) => {
      const { fleetSummary: s } = await connect(cmd)<{ fleetSummary: FleetSummary }>(
        gql.FLEET_SUMMARY,
      );
      if (opts.output !== 'table') return io.stdout(render(s, opts.output));
      io.stdout(summaryText(s));
    });

  // ─── tokens ────────────────────────────────────────────────────────────────────────────────
  const tokens = program.command('tokens').description('API tokens (ADMIN)');

  tokens
    .command('create')
    .description('create a token; its secret is printed once, on stdout')
    .argument('<name>', 'token name')
    .requiredOption('--role <role>', 'viewer, operator or admin')
    .option('--selector <selector>', 'limit the token to clusters matching this label selector')
    .option('--expires-in <duration>', 'e.g. 30d, 12h')
    .action(
      async (
        name: string,
        opts: { role: string; selector?: string; expiresIn?: string },
        cmd: Command,
      ) => {
        const input: Record<string, unknown> = {
          name,
          role: parseEnumOption(opts.role, '--role', ROLES),
        };
        if (opts.selector) input.labelSelector = opts.selector;
        if (opts.expiresIn)
          input.expiresAt = new Date(
            io.now().getTime() + parseDuration(opts.expiresIn),
          ).toISOString();
        const { createApiToken: t } = await connect(cmd)<{
          createApiToken: { secret: string; token: Token };
        }>(gql.CREATE_TOKEN, { input });
        io.stderr(
          `token/${t.token.name} created (id ${t.token.id}, role ${t.token.role}` +
            `${t.token.expiresAt ? `, expires ${t.token.expiresAt}` : ''})\n` +
            'WARNING: the secret below is shown this once; only its hash is stored.\n',
        );
        io.stdout(`${t.secret}\n`);
      },
    );

  tokens
    .command('list')
    .alias('ls')
    .description('every token (secrets are never shown)')
    .addOption(outputOption(['table', 'json'], 'table'))
    .action(async (opts: { output: string }, cmd: Command) => {
      const { apiTokens } = await connect(cmd)<{ apiTokens: Token[] }>(gql.LIST_TOKENS);
      if (opts.output === 'json') return io.stdout(render(apiTokens, 'json'));
      const now = io.now();
      const state = (t: Token) =>
        t.revokedAt
          ? 'Revoked'
          : t.expiresAt && new Date(t.expiresAt) <= now
            ? 'Expired'
            : 'Active';
      io.stdout(
        table(
          ['ID', 'NAME', 'ROLE', 'SELECTOR', 'STATE', 'EXPIRES', 'LAST-USED', 'AGE'],
          apiTokens.map((t) => [
            t.id,
            t.name,
            t.role,
            t.labelSelector || '<all>',
            state(t),
            t.expiresAt ?? '<never>',
            t.lastUsedAt ? `${age(t.lastUsedAt, now)} ago` : '<never>',
            age(t.createdAt, now),
          ]),
        ),
      );
    });

  tokens
    .command('revoke')
    .description('revoke a token at once')
    .argument('<id>', 'token ID (from tokens list)')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const { revokeApiToken: t } = await connect(cmd)<{ revokeApiToken: Token }>(
        gql.REVOKE_TOKEN,
        {
          id,
        },
      );
      io.stdout(`token/${t.name} revoked\n`);
    });

  // ─── rollouts ──────────────────────────────────────────────────────────────────────────────
  const rollouts = program
    .command('rollouts')
    .description('apply one change across clusters in waves');

  rollouts
    .command('start')
    .description('start a rollout of one change to the clusters a selector matches')
    .requiredOption('-l, --selector <selector>', 'label selector ("" for every cluster in scope)')
    .option('--enable', 'enable Karpenter')
    .option('--disable', 'disable Karpenter')
    .option('--cas <mode>', 'Cluster Autoscaler: disable, keep or migrate')
    .option('--log-level <level>', 'debug, info or error')
    .option(
      '--feature-gate <Name=bool>',
      'feature gate; the set given replaces the map (repeatable)',
      collect,
    )
    .option(
      '-f, --nodepool-file <file>',
      'NodePool manifest (or spec with --nodepool-name) to upsert',
    )
    .option('--nodepool-name <name>', 'NodePool name for --nodepool-file')
    .option('--delete-nodepool <name>', 'NodePool to delete')
    .option('--waves <steps>', 'cumulative steps, e.g. 1,10%,50%,100%')
    .option('--max-failures <n>', 'failed clusters tolerated before the rollout stops')
    .option('--min-healthy-seconds <n>', 'how long each cluster must stay healthy')
    .option('--wave-timeout-seconds <n>', 'per-wave deadline')
    .action(async (opts: RolloutStartOptions, cmd: Command) => {
      const change = await rolloutChange(opts, io);
      const strategy: Record<string, unknown> = {};
      if (opts.waves) strategy.waves = parseWaves(opts.waves);
      if (opts.maxFailures)
        strategy.maxFailures = parseIntOption(opts.maxFailures, '--max-failures');
      if (opts.minHealthySeconds)
        strategy.minHealthySeconds = parseIntOption(
          opts.minHealthySeconds,
          '--min-healthy-seconds',
        );
      if (opts.waveTimeoutSeconds)
        strategy.waveTimeoutSeconds = parseIntOption(
          opts.waveTimeoutSeconds,
          '--wave-timeout-seconds',
          1,
        );
      const { startRollout: r } = await connect(cmd)<{ startRollout: RolloutRow }>(
        gql.START_ROLLOUT,
        { selector: opts.selector, change, ...(Object.keys(strategy).length ? { strategy } : {}) },
      );
      io.stdout(`rollout/${r.id} started: ${r.state}, ${r.counts.total} clusters\n`);
    });

  rollouts
    .command('list')
    .alias('ls')
    .description('rollouts, newest first')
    .option('--state <state>', 'RUNNING, PAUSED, FAILED, COMPLETED or ABORTED')
    .addOption(outputOption(['table', 'json'], 'table'))
    .action(async (opts: { state?: string; output: string }, cmd: Command) => {
      const state = opts.state ? parseEnumOption(opts.state, '--state', ROLLOUT_STATES) : undefined;
      const rows: RolloutRow[] = [];
      for await (const nodes of pages<RolloutRow, { rollouts: Page<RolloutRow> }>(
        connect(cmd),
        gql.LIST_ROLLOUTS,
        state ? { state } : {},
        (d) => d.rollouts,
      )) {
        rows.push(...nodes);
      }
      if (opts.output === 'json') return io.stdout(render(rows, 'json'));
      const now = io.now();
      io.stdout(
        table(
          ['ID', 'STATE', 'SELECTOR', 'WAVE', 'HEALTHY', 'FAILED', 'SKIPPED', 'AGE'],
          rows.map((r) => [
            r.id,
            r.state,
            r.selector || '<all>',
            String(r.currentWave),
            `${r.counts.healthy}/${r.counts.total}`,
            String(r.counts.failed),
            String(r.counts.skipped),
            age(r.createdAt, now),
          ]),
        ),
      );
    });

  rollouts
    .command('get')
    .description('a rollout with its waves and clusters')
    .argument('<id>', 'rollout ID')
    .addOption(outputOption(['yaml', 'json'], 'yaml'))
    .action(async (id: string, opts: { output: 'yaml' | 'json' }, cmd: Command) => {
      const { rollout } = await connect(cmd)<{ rollout: unknown }>(gql.GET_ROLLOUT, { id });
      io.stdout(render(rollout, opts.output));
    });

  const rolloutVerb = (verb: string, document: string, field: string, what: string) =>
    rollouts
      .command(verb)
      .description(what)
      .argument('<id>', 'rollout ID')
      .action(async (id: string, _opts: unknown, cmd: Command) => {
        const data = await connect(cmd)<Record<string, RolloutRow>>(document, { id });
        const r = data[field]!;
        io.stdout(`rollout/${r.id}: ${r.state}${r.reason ? ` (${r.reason})` : ''}\n`);
      });
  rolloutVerb(
    'pause',
    gql.PAUSE_ROLLOUT,
    'pauseRollout',
    'no new cluster is changed until resumed',
  );
  rolloutVerb('resume', gql.RESUME_ROLLOUT, 'resumeRollout', 'continue a paused or failed rollout');
  rollouts
    .command('abort')
    .description('stop for good; clusters already changed keep the change (nothing is reverted)')
    .argument('<id>', 'rollout ID')
    .option('--reason <text>', 'recorded on the rollout')
    .action(async (id: string, opts: { reason?: string }, cmd: Command) => {
      const { abortRollout: r } = await connect(cmd)<{ abortRollout: RolloutRow }>(
        gql.ABORT_ROLLOUT,
        { id, reason: opts.reason },
      );
      io.stdout(`rollout/${r.id}: ${r.state}${r.reason ? ` (${r.reason})` : ''}\n`);
    });

  return program;
}

interface RolloutStartOptions {
  selector: string;
  enable?: boolean;
  disable?: boolean;
  cas?: string;
  logLevel?: string;
  featureGate?: string[];
  nodepoolFile?: string;
  nodepoolName?: string;
  deleteNodepool?: string;
  waves?: string;
  maxFailures?: string;
  minHealthySeconds?: string;
  waveTimeoutSeconds?: string;
}

async function rolloutChange(opts: RolloutStartOptions, io: Io): Promise<Record<string, unknown>> {
  if (opts.enable && opts.disable) throw usageError('--enable and --disable exclude each other');
  if (opts.nodepoolFile && opts.deleteNodepool)
    throw usageError('one NodePool operation per rollout: --nodepool-file or --delete-nodepool');
  const change: Record<string, unknown> = {};
  if (opts.enable) change.enabled = true;
  if (opts.disable) change.enabled = false;
  if (opts.cas) change.clusterAutoscalerMode = parseCasMode(opts.cas);
  if (opts.logLevel) change.logLevel = parseLogLevel(opts.logLevel);
  if (opts.featureGate) change.featureGates = parseFeatureGates(opts.featureGate);
  if (opts.deleteNodepool) change.deleteNodePool = opts.deleteNodepool;
  if (opts.nodepoolFile) {
    let text: string;
    try {
      text = await io.readFile(opts.nodepoolFile);
    } catch (err) {
      throw usageError(`cannot read ${opts.nodepoolFile}: ${(err as Error).message}`, '-f');
    }
    change.upsertNodePool = parseNodePoolDocument(text, opts.nodepoolName);
  }
  if (Object.keys(change).length === 0)
    throw usageError('give a change: --enable, --disable, --cas, --log-level, --feature-gate, ...');
  return change;
}

export interface FleetSummary {
  clusters: number;
  inSync: number;
  stale: number;
  paused: number;
  karpenterEnabled: number;
  clusterAutoscalerDisabled: number;
  byPlatform: { value: string; count: number }[];
  byTopology: { value: string; count: number }[];
  byCondition: { type: string; status: string; reason: string; count: number }[];
}

export function summaryText(s: FleetSummary): string {
  const sections = [
    table(
      ['CLUSTERS', 'KARPENTER', 'IN-SYNC', 'STALE', 'PAUSED', 'CAS-DISABLED'],
      [
        [
          s.clusters,
          s.karpenterEnabled,
          s.inSync,
          s.stale,
          s.paused,
          s.clusterAutoscalerDisabled,
        ].map(String),
      ],
    ),
    table(
      ['PLATFORM', 'COUNT'],
      s.byPlatform.map((p) => [p.value, String(p.count)]),
    ),
    table(
      ['TOPOLOGY', 'COUNT'],
      s.byTopology.map((p) => [p.value, String(p.count)]),
    ),
  ];
  if (s.byCondition.length)
    sections.push(
      table(
        ['CONDITION', 'STATUS', 'REASON', 'COUNT'],
        s.byCondition.map((c) => [c.type, c.status, c.reason, String(c.count)]),
      ),
    );
  return sections.join('\n');
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
