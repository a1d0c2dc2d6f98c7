import { ApiException, RequestContext, type KubeConfig } from '@kubernetes/client-node';
import { fetch } from 'undici';

/** Longest an API-server request (not a watch) may take, response body included. */
export const API_SERVER_TIMEOUT_MS = 30_000;

/** The Content-Type of a PATCH names its kind of patch (server-side apply, JSON merge patch). */
export const PATCH_CONTENT_TYPE = {
  apply: 'application/apply-patch+yaml',
  merge: 'application/merge-patch+json',
} as const;

export type RestMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RestRequest {
  /** Query parameters; `undefined` values are left out. */
  query?: Readonly<Record<string, string | number | boolean | undefined>>;
  /** Sent as JSON (which is also valid apply YAML). */
  body?: unknown;
  /** The body's Content-Type, `application/json` unless a PATCH names its kind. */
  contentType?: string;
}

/**
 * Requests to one API server, JSON in and out, with the kubeconfig's credentials, TLS and
 * connections (client-node's `applySecurityAuthentication`, as its own `Watch` does): what
 * client-go's RESTClient is under its typed and dynamic clients.
 *
 * Why not client-node's generated API classes: they and `KubernetesObjectApi` go through its
 * `ObjectSerializer`, whose type map loads every generated model (~800 modules, 1 MB minified)
 * into the sidecar; a sidecar that only needs paths and JSON keeps that off its heap (issue 48,
 * target 5, docs/PERFORMANCE.md). It also means objects travel as the wire has them: the typed
 * models renamed wire fields (`x-kubernetes-validations`, `default`) and turned timestamps into
 * Dates.
 *
 * Every request has a deadline: an API server that accepts a request and never answers would
 * otherwise hold the caller forever; a timed-out request rejects with the signal's TimeoutError.
 * A refusal rejects with client-node's `ApiException`: the HTTP code and the response body (the
 * API server's Status), as its generated clients threw.
 */
export class RestClient {
  constructor(
    readonly kubeConfig: KubeConfig,
    readonly timeoutMs = API_SERVER_TIMEOUT_MS,
  ) {}

  async request<T>(method: RestMethod, path: string, request: RestRequest = {}): Promise<T> {
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig: no current cluster');
    const url = new URL(cluster.server + path);
    for (const [name, value] of Object.entries(request.query ?? {}))
      if (value !== undefined) url.searchParams.set(name, String(value));
    const context = new RequestContext(url.toString(), method);
    await this.kubeConfig.applySecurityAuthentication(context);
    const headers: Record<string, string> = { ...context.getHeaders(), accept: 'application/json' };
    if (request.body !== undefined)
      headers['content-type'] = request.contentType ?? 'application/json';
    const response = await fetch(url, {
      method,
      headers,
      ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
      dispatcher: context.getDispatcher(),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const text = await response.text();
    if (!response.ok)
      throw new ApiException(
        response.status,
        `${method} ${path}: HTTP ${response.status}`,
        text,
        Object.fromEntries(response.headers),
      );
    return (text === '' ? undefined : JSON.parse(text)) as T;
  }

  get<T>(path: string, query?: RestRequest['query']): Promise<T> {
    return this.request<T>('GET', path, query ? { query } : {});
  }

  /** A GET whose 404 (the object, or its kind, is not there) is `undefined`. */
  async getIfExists<T>(path: string): Promise<T | undefined> {
    try {
      return await this.get<T>(path);
    } catch (err) {
      if (err instanceof ApiException && err.code === 404) return undefined;
      throw err;
    }
  }

  /**
   * Every item of a collection, a page of `pageSize` at a time (`limit` and `continue`), and the
   * resourceVersion of the list to watch from.
   */
  async list<T>(
    path: string,
    query: RestRequest['query'] = {},
    pageSize = 500,
  ): Promise<{ items: T[]; resourceVersion?: string }> {
    const items: T[] = [];
    let continueToken: string | undefined;
    let resourceVersion: string | undefined;
    do {
      const page = await this.get<{
        items?: T[];
        metadata?: { continue?: string; resourceVersion?: string };
      }>(path, { ...query, limit: pageSize, continue: continueToken });
      items.push(...(page.items ?? []));
      continueToken = page.metadata?.continue || undefined;
      resourceVersion = page.metadata?.resourceVersion;
    } while (continueToken);
    return resourceVersion === undefined ? { items } : { items, resourceVersion };
  }
}
