import { CliError } from './errors.js';

export interface GraphQLErrorBody {
  message: string;
  extensions?: { code?: unknown; field?: unknown; [key: string]: unknown };
}

export interface ClientOptions {
  apiUrl: string;
  token?: string;
  /** Injected in tests; the global fetch otherwise. */
  fetch?: typeof fetch;
}

export type Request = <T>(query: string, variables?: Record<string, unknown>) => Promise<T>;

/**
 * GraphQL over HTTP (POST, JSON). The first GraphQL error becomes a CliError carrying its
 * extensions; transport failures name the URL, since a wrong KFLEET_API_URL is the usual cause.
 */
export function graphqlRequest(options: ClientOptions): Request {
  const endpoint = `${options.apiUrl.replace(/\/+$/, '')}/graphql`;
  const doFetch = options.fetch ?? fetch;
  return async <T>(query: string, variables: Record<string, unknown> = {}): Promise<T> => {
    let res: Response;
    try {
      res = await doFetch(endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/graphql-response+json, application/json',
          ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
        },
        body: JSON.stringify({ query, variables }),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new CliError(
        `cannot reach the fleet API at ${endpoint}: ${cause?.code ?? cause?.message ?? String(err)}`,
      );
    }
    let body: { data?: T | null; errors?: GraphQLErrorBody[] };
    try {
      body = (await res.json()) as typeof body;
    } catch {
      throw new CliError(`the fleet API at ${endpoint} answered HTTP ${res.status}, not GraphQL`);
    }
    const first = body.errors?.[0];
    if (first) throw errorFromGraphQL(first);
    if (body.data == null) throw new CliError(`empty GraphQL response (HTTP ${res.status})`);
    return body.data;
  };
}

export function errorFromGraphQL(error: GraphQLErrorBody): CliError {
  const code = typeof error.extensions?.code === 'string' ? error.extensions.code : undefined;
  const field = typeof error.extensions?.field === 'string' ? error.extensions.field : undefined;
  return new CliError(error.message, code, field);
}
