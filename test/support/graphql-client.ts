/** A minimal GraphQL-over-HTTP client, as any SRE script would use (fetch, JSON, POST). */
export interface GraphQLResponse<T> {
  data?: T;
  errors?: { message: string; path?: string[]; extensions?: Record<string, unknown> }[];
}

export function graphqlClient(url: string, headers: Record<string, string> = {}) {
  return async function request<T = Record<string, unknown>>(
    query: string,
    variables: Record<string, unknown> = {},
  ): Promise<GraphQLResponse<T>> {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ query, variables }),
    });
    return (await res.json()) as GraphQLResponse<T>;
  };
}
