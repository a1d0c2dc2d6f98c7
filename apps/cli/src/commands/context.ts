import { Command, Option } from 'commander';
import type { Client } from 'graphql-ws';
import { isClusterId } from '../args.js';
import { graphqlRequest, type Request } from '../client.js';
// Types only: config.ts brings zod and yaml, imported when a command reads or writes the config
// file, not at start-up (docs/PERFORMANCE.md, kfleet start-up).
import type { Connection, KfleetConfig } from '../config.js';
import * as gql from '../documents.js';
import { CliError } from '../errors.js';
import { OUTPUT_FORMATS, type OutputFormat } from '../format.js';
import { liveClient } from '../live.js';

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
  /** Whether stdout / stdin are terminals: progress bars and prompts only there. */
  tty?: { stdout: boolean; stdin: boolean };
  /** The terminal's width, when stdout is one. */
  columns?: number;
}

export interface GlobalOptions {
  api?: string;
  token?: string;
  context?: string;
}

/** The config file's contents; an absent file is an empty config. */
export async function loadConfig(io: Io): Promise<{ path: string; config: KfleetConfig }> {
  const { configPath, parseConfig } = await import('../config.js');
  // Without HOME (a bare CI job) there is no config to read; writing one needs KFLEET_CONFIG.
  const path = configPath(io.env);
  if (!path) return { path: '', config: parseConfig('', '') };
  let text = '';
  try {
    text = await io.readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new CliError(`cannot read ${path}: ${(err as Error).message}`, 'USAGE');
    }
  }
  return { path, config: parseConfig(text, path) };
}

export async function saveConfig(io: Io, path: string, config: KfleetConfig): Promise<void> {
  if (!path) throw new CliError('no place for the config file: set KFLEET_CONFIG or HOME', 'USAGE');
  const { serializeConfig } = await import('../config.js');
  await io.writeFile(path, serializeConfig(config));
}

export interface Page<T> {
  nodes: T[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

export interface ClusterAck {
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

export interface Token {
  id: string;
  name: string;
  role: string;
  labelSelector: string | null;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export interface RolloutRow {
  id: string;
  state: string;
  selector: string;
  currentWave: number;
  /** WAITING_APPROVAL: the wave whose approval gate holds the rollout. */
  waitingStage?: number | null;
  createdAt: string;
  createdBy?: string;
  change?: unknown;
  reason: string | null;
  counts: { total: number; healthy: number; failed: number; applying: number; skipped: number };
}

export const PAGE_SIZE = 100;
export const ROLES = ['VIEWER', 'OPERATOR', 'ADMIN'] as const;
export const PLATFORMS = ['AWS', 'AZURE', 'CAPI'] as const;
export const TOPOLOGIES = ['STANDALONE', 'HOSTED'] as const;
export const ROLLOUT_STATES = [
  'RUNNING',
  'WAITING_APPROVAL',
  'PAUSED',
  'FAILED',
  'COMPLETED',
  'ABORTED',
] as const;

export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** Follows a Relay connection to its end; `pick` digs the connection out of the response. */
export async function* pages<T, R>(
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

export const ack = (c: ClusterAck, what: string): string =>
  `cluster/${c.name} ${what} (generation ${c.karpenter.generation}, observed ${c.status.observedGeneration})\n`;

/** What every command group needs: the I/O, a GraphQL connection per command, output flags. */
export interface CommandContext {
  io: Io;
  /** GraphQL over HTTP with the connection flags, environment and config resolve to. */
  connect: (cmd: Command) => Request;
  /** Where `connect` goes and with which token (resolved from flags, env, config). */
  connection: (cmd: Command) => Promise<Connection>;
  /** A subscription client on the same connection; the caller disposes it. */
  live: (cmd: Command) => Promise<Client>;
  outputOption: (choices: string[], fallback: string) => Option;
  /** `-o table|wide|json|yaml|name`, the option every read carries. */
  readOutput: (fallback?: OutputFormat) => Option;
}

export function commandContext(io: Io): CommandContext {
  const connection = async (cmd: Command): Promise<Connection> => {
    const globals = cmd.optsWithGlobals<GlobalOptions>();
    const { config } = await loadConfig(io);
    const { resolveConnection } = await import('../config.js');
    return resolveConnection(
      {
        flags: {
          ...(globals.api ? { api: globals.api } : {}),
          ...(globals.token ? { token: globals.token } : {}),
          ...(globals.context ? { context: globals.context } : {}),
        },
        env: io.env,
        config,
      },
      DEFAULT_API_URL,
    );
  };

  const connect = (cmd: Command): Request => {
    // Resolved once, on the first request: commands that fail on their arguments never read
    // the config file.
    let resolved: Promise<{ request: Request; token?: string }> | undefined;
    const open = () =>
      (resolved ??= connection(cmd).then((c) => ({
        request: graphqlRequest({
          apiUrl: c.apiUrl,
          ...(c.token ? { token: c.token } : {}),
          ...(io.fetch ? { fetch: io.fetch } : {}),
        }),
        ...(c.token ? { token: c.token } : {}),
      })));
    return async <T>(query: string, variables?: Record<string, unknown>) => {
      const { request, token } = await open();
      try {
        return await request<T>(query, variables);
      } catch (err) {
        if (!token && err instanceof CliError && err.code === 'UNAUTHENTICATED') {
          throw new CliError(
            `${err.message}; run kfleet login, set KFLEET_TOKEN or pass --token`,
            err.code,
          );
        }
        throw err;
      }
    };
  };

  const live = async (cmd: Command): Promise<Client> => liveClient(await connection(cmd));

  const outputOption = (choices: string[], fallback: string) =>
    new Option('-o, --output <format>', 'output format').choices(choices).default(fallback);
  const readOutput = (fallback: OutputFormat = 'table') =>
    outputOption([...OUTPUT_FORMATS], fallback);

  return { io, connect, connection, live, outputOption, readOutput };
}
