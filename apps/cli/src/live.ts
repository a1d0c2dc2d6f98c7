import type { Client } from 'graphql-ws';
import { parseDuration } from './args.js';
import { errorFromGraphQL } from './client.js';
import { CliError } from './errors.js';

export interface LiveOptions {
  apiUrl: string;
  token?: string;
}

/**
 * A graphql-ws connection to the API's subscriptions, authenticated like HTTP requests. Loaded
 * on first use: most commands never subscribe, and every command pays for what it imports.
 */
export async function liveClient({ apiUrl, token }: LiveOptions): Promise<Client> {
  const [{ createClient }, { default: WebSocket }] = await Promise.all([
    import('graphql-ws'),
    import('ws'),
  ]);
  return createClient({
    url: `${apiUrl.replace(/\/+$/, '').replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: token ? { authorization: `Bearer ${token}` } : {},
    // A watch outlives network blips; the periodic refetch below covers what a gap misses.
    retryAttempts: 1000,
    shouldRetry: () => true,
    lazy: true,
  });
}

export interface FollowOptions<T> {
  client: Client;
  query: string;
  variables: Record<string, unknown>;
  /** Digs the value out of each subscription event. */
  pick: (data: Record<string, unknown>) => T;
  /** The current value, read over HTTP: first, then every `pollMs` as a safety net. */
  fetch: () => Promise<T>;
  pollMs: number;
}

/**
 * Every value of a live object: the current one, then each change the subscription pushes.
 * The subscription is opened before the first read so no change falls between the two, and the
 * object is read again every `pollMs`: a dropped WebSocket or a missed event delays an update,
 * never hides it. Values may repeat; callers act on state, not on events.
 */
export async function* follow<T>(options: FollowOptions<T>): AsyncGenerator<T> {
  const queue: T[] = [];
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const push = (value: T) => {
    queue.push(value);
    wake?.();
  };
  const fail = (err: unknown) => {
    failure ??= err instanceof Error ? err : new CliError(String(err));
    wake?.();
  };
  const dispose = options.client.subscribe<Record<string, unknown>>(
    { query: options.query, variables: options.variables },
    {
      next: (result) => {
        const first = result.errors?.[0];
        if (first) fail(errorFromGraphQL(first));
        else if (result.data) push(options.pick(result.data));
      },
      error: (err) =>
        fail(
          err instanceof Error
            ? new CliError(`subscription failed: ${err.message}`)
            : Array.isArray(err) && err[0]
              ? errorFromGraphQL(err[0] as { message: string })
              : new CliError('subscription closed by the API'),
        ),
      complete: () => undefined,
    },
  );
  const refetch = () => options.fetch().then(push, fail);
  const timer = setInterval(() => void refetch(), options.pollMs);
  try {
    await refetch();
    for (;;) {
      if (failure) throw failure;
      const next = queue.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  } finally {
    clearInterval(timer);
    dispose();
  }
}

/** Rejects with a timeout CliError after `ms`; `ms` 0 waits for ever. */
export function deadline(
  ms: number,
  what: () => string,
): { promise: Promise<never>; clear(): void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<never>((_, reject) => {
    if (ms > 0) timer = setTimeout(() => reject(new CliError(what(), 'TIMEOUT')), ms);
  });
  return { promise, clear: () => clearTimeout(timer) };
}

/**
 * A `--watch`: hands every value of the live object to `show` until the stream ends or
 * `--timeout` passes (the end such a watch asks for, so not an error), then closes the
 * subscription and the connection. `--timeout` absent or `0` runs until interrupted.
 */
export async function watch<T>(
  options: FollowOptions<T> & { timeout: string | undefined },
  show: (value: T) => void,
): Promise<void> {
  const { timeout } = options;
  const limit = timeout === undefined || timeout === '0' ? 0 : parseDuration(timeout, '--timeout');
  const stop = deadline(limit, () => `--timeout ${String(timeout)} reached`);
  const changes = follow(options);
  const consume = (async () => {
    for await (const value of changes) show(value);
  })();
  try {
    await Promise.race([consume, stop.promise]);
  } catch (err) {
    if (!(err instanceof CliError && err.code === 'TIMEOUT')) throw err;
  } finally {
    stop.clear();
    await changes.return(undefined);
    await options.client.dispose();
  }
}
