import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

/** A graphql-ws client as dashboards use it, authenticated through connectionParams. */
export function subscriptionClient(httpUrl: string, token?: string): Client {
  return createClient({
    url: `${httpUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: token ? { authorization: `Bearer ${token}` } : {},
    retryAttempts: 0,
    lazy: true,
  });
}

/** Collects a subscription's events until `until` says stop; rejects on a GraphQL error. */
export function collect<T>(
  client: Client,
  query: string,
  variables: Record<string, unknown>,
  until: (events: T[]) => boolean,
  timeoutMs = 15_000,
): Promise<T[]> {
  const events: T[] = [];
  return new Promise<T[]>((resolve, reject) => {
    const timer = setTimeout(() => {
      dispose();
      reject(
        new Error(`subscription timed out after ${timeoutMs} ms with ${events.length} event(s)`),
      );
    }, timeoutMs);
    const dispose = client.subscribe<T>(
      { query, variables },
      {
        next: (result) => {
          if (result.errors?.length) {
            clearTimeout(timer);
            dispose();
            reject(Object.assign(new Error(result.errors[0]!.message), { errors: result.errors }));
            return;
          }
          events.push(result.data as T);
          if (until(events)) {
            clearTimeout(timer);
            dispose();
            resolve(events);
          }
        },
        error: (err) => {
          clearTimeout(timer);
          reject(
            err instanceof Error
              ? err
              : Object.assign(new Error('subscription error'), { errors: err }),
          );
        },
        complete: () => undefined,
      },
    );
  });
}
