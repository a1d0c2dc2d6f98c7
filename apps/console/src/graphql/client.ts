import { createClient, type Client } from 'graphql-ws';
import type { TypedDocumentString } from './generated.js';

/** A refusal as the API phrased it: its message, code and (for bad input) the offending field. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    readonly field: string | undefined,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The refusal for display: the field first when the API's message does not already name it. */
export function describeRefusal(error: ApiError): string {
  return error.field && !error.message.startsWith(error.field)
    ? `${error.field}: ${error.message}`
    : error.message;
}

interface GraphQLResponse<T> {
  data?: T | null;
  errors?: readonly { message: string; extensions?: { code?: string; field?: string } }[];
}

/** Called when the API no longer accepts the token (revoked, expired): the session ends. */
type OnUnauthenticated = () => void;

export interface FleetClient {
  request<R, V>(document: TypedDocumentString<R, V>, variables: V): Promise<R>;
  /**
   * Sends a query now, ahead of the page that will ask it (on load, beside the token check, so
   * the page's data is not one round trip behind it). A refusal of the token ends the session as
   * any request's does.
   */
  prefetch<R, V>(document: TypedDocumentString<R, V>, variables: V): void;
  /**
   * The answer of a prefetch of that very query and variables, once (a later asker sends its own
   * request), and only while fresh (PREFETCH_FRESH_MS): undefined otherwise.
   */
  takePrefetched<R, V>(document: TypedDocumentString<R, V>, variables: V): Promise<R> | undefined;
  subscribe<R, V>(
    document: TypedDocumentString<R, V>,
    variables: V,
    onData: (data: R) => void,
    onError: (error: ApiError) => void,
  ): () => void;
  close(): void;
}

function toApiError(errors: NonNullable<GraphQLResponse<unknown>['errors']>): ApiError {
  const first = errors[0];
  return new ApiError(
    first?.message ?? 'the API refused the request',
    first?.extensions?.code,
    first?.extensions?.field,
  );
}

/** How long a prefetched answer may stand in for the page's own request. */
export const PREFETCH_FRESH_MS = 10_000;

/**
 * GraphQL over fetch for queries and mutations, graphql-ws for subscriptions, both on the page's
 * own origin (the API serves the console), authenticated with the session's bearer token.
 */
export function createFleetClient(
  token: string,
  onUnauthenticated: OnUnauthenticated,
): FleetClient {
  const httpUrl = new URL('/graphql', window.location.href).toString();
  let ws: Client | undefined;
  const wsClient = () =>
    (ws ??= createClient({
      url: httpUrl.replace(/^http/, 'ws'),
      connectionParams: { authorization: `Bearer ${token}` },
      lazy: true,
      // Live views recover from an API restart by themselves; a bounded number of tries keeps a
      // dead API from being hammered forever.
      retryAttempts: 20,
    }));

  const check = (error: ApiError) => {
    if (error.code === 'UNAUTHENTICATED') onUnauthenticated();
    return error;
  };

  const prefetched = new Map<string, { answer: Promise<unknown>; at: number }>();
  const prefetchKey = (document: { toString(): string }, variables: unknown) =>
    `${document.toString()}\n${JSON.stringify(variables)}`;

  const client: FleetClient = {
    prefetch(document, variables) {
      const answer = client.request(document, variables);
      // Taken or not, a failure must not be an unhandled rejection; the taker sees it.
      answer.catch(() => undefined);
      prefetched.set(prefetchKey(document, variables), { answer, at: Date.now() });
    },
    takePrefetched<R, V>(document: TypedDocumentString<R, V>, variables: V) {
      const key = prefetchKey(document, variables);
      const entry = prefetched.get(key);
      prefetched.delete(key);
      return entry && Date.now() - entry.at <= PREFETCH_FRESH_MS
        ? (entry.answer as Promise<R>)
        : undefined;
    },
    async request(document, variables) {
      const res = await fetch(httpUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          authorization: `Bearer ${token}`,
        },
        body: JSON.stringify({ query: document.toString(), variables }),
      });
      let body: GraphQLResponse<never>;
      try {
        body = (await res.json()) as GraphQLResponse<never>;
      } catch {
        throw new ApiError(
          `the API answered ${res.status} ${res.statusText}`,
          undefined,
          undefined,
        );
      }
      if (body.errors?.length) throw check(toApiError(body.errors));
      if (!body.data) throw new ApiError('the API returned no data', undefined, undefined);
      return body.data;
    },
    subscribe(document, variables, onData, onError) {
      return wsClient().subscribe<never>(
        { query: document.toString(), variables: variables as Record<string, unknown> },
        {
          next: (result) => {
            if (result.errors?.length) onError(check(toApiError(result.errors)));
            else if (result.data) onData(result.data);
          },
          error: (err: unknown) =>
            onError(
              new ApiError(
                err instanceof Error ? err.message : 'live updates were interrupted',
                undefined,
                undefined,
              ),
            ),
          complete: () => undefined,
        },
      );
    },
    close() {
      prefetched.clear();
      void ws?.dispose();
    },
  };
  return client;
}
