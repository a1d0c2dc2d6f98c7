import { Command, Option } from 'commander';
import { isClusterId } from '../args.js';
import { graphqlRequest, type Request } from '../client.js';
import * as gql from '../documents.js';
import { CliError } from '../errors.js';

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

export interface GlobalOptions {
  api?: string;
  token?: string;
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
  createdAt: string;
  reason: string | null;
  counts: { total: number; healthy: number; failed: number; applying: number; skipped: number };
}

export const PAGE_SIZE = 100;
export const ROLES = ['VIEWER', 'OPERATOR', 'ADMIN'] as const;
export const PLATFORMS = ['AWS', 'AZURE', 'CAPI'] as const;
export const TOPOLOGIES = ['STANDALONE', 'HOSTED'] as const;
export const ROLLOUT_STATES = ['RUNNING', 'PAUSED', 'FAILED', 'COMPLETED', 'ABORTED'] as const;

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
  connect: (cmd: Command) => Request;
  outputOption: (choices: string[], fallback: string) => Option;
}

export function commandContext(io: Io): CommandContext {
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

  return { io, connect, outputOption };
}
