import { FIELD_MANAGER } from '@fleet/contracts';
import {
  ApiException,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  type KubernetesObject,
} from '@kubernetes/client-node';

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

export const isNotFound = (err: unknown): boolean => err instanceof ApiException && err.code === 404;

/** The API server does not serve this kind (its CRD is not installed). */
export const isUnknownKind = (err: unknown): boolean =>
  isNotFound(err) || (err instanceof Error && err.message.includes('Unrecognized API version and kind'));

/** Human-readable cause of a failed API call, with the API server's own message when it has one. */
export function describeKubeError(err: unknown): string {
  if (err instanceof ApiException) {
    const body = typeof err.body === 'string' ? safeJson(err.body) : err.body;
    const message = (body as { message?: string } | undefined)?.message;
    return `HTTP ${err.code}${message ? `: ${message}` : ''}`;
  }
  return err instanceof Error ? err.message : String(err);
}

const safeJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return { message: text };
  }
};

/** The one place the sidecar talks to an API server: server-side apply, list, read, delete. */
export class ClusterClient {
  readonly objects: KubernetesObjectApi;

  constructor(readonly kubeConfig: KubeConfig) {
    this.objects = KubernetesObjectApi.makeApiClient(kubeConfig);
  }

  static fromKubeconfigFile(path: string | undefined): ClusterClient {
    const kc = new KubeConfig();
    if (path) kc.loadFromFile(path);
    else kc.loadFromDefault();
    return new ClusterClient(kc);
  }

  /** Server-side apply as the fleet's field manager; force, since the fleet owns these fields. */
  async apply<T extends KubernetesObject>(object: T, fieldManager = FIELD_MANAGER): Promise<T> {
    return (await this.objects.patch(
      object,
      undefined,
      undefined,
      fieldManager,
      true,
      PatchStrategy.ServerSideApply,
    )) as T;
  }

  async read<T extends KubernetesObject>(ref: ObjectRef): Promise<T | undefined> {
    try {
      return (await this.objects.read({
        apiVersion: ref.apiVersion,
        kind: ref.kind,
        metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
      })) as T;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async list<T extends KubernetesObject>(
    apiVersion: string,
    kind: string,
    options: { namespace?: string; labelSelector?: string } = {},
  ): Promise<T[]> {
    const items: T[] = [];
    let continueToken: string | undefined;
    do {
      const page = await this.objects.list<T>(
        apiVersion,
        kind,
        options.namespace,
        undefined,
        undefined,
        undefined,
        undefined,
        options.labelSelector,
        500,
        continueToken,
      );
      items.push(...page.items);
      continueToken = page.metadata?._continue || undefined;
    } while (continueToken);
    return items;
  }

  /** Deletes; an object already gone counts as deleted. */
  async delete(ref: ObjectRef): Promise<void> {
    try {
      await this.objects.delete(
        {
          apiVersion: ref.apiVersion,
          kind: ref.kind,
          metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
        },
        undefined,
        undefined,
        undefined,
        undefined,
        'Background',
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
