import {
  AUTHENTICATION,
  CLOUD_CREDENTIAL,
  INFRASTRUCTURE,
  MACHINE_SET,
  PROXY,
  type ResourceIdentity,
} from '@fleet/contracts';
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
} from '@kubernetes/client-node';
import { API_SERVER_TIMEOUT_MS, apiConfigurationWithDeadline } from './api-deadline.js';

/**
 * The handful of cluster reads discovery needs, so that discovery can run against a real
 * cluster, an API-server emulator or plain objects in a test. Missing objects are `undefined`
 * (or an empty list); every other failure throws.
 */
export interface ClusterObjectReader {
  /** Infrastructure `cluster` (config.openshift.io/v1). */
  getInfrastructure(): Promise<unknown>;
  /** Proxy `cluster` (config.openshift.io/v1); undefined where the cluster has none. */
  getProxy(): Promise<unknown>;
  /** CloudCredential `cluster` (operator.openshift.io/v1); undefined where CCO is not installed. */
  getCloudCredential(): Promise<unknown>;
  /** Authentication `cluster` (config.openshift.io/v1). */
  getAuthentication(): Promise<unknown>;
  /** MachineSets (machine.openshift.io/v1beta1) of a namespace; empty when the CRD is absent. */
  listMachineSets(namespace: string): Promise<unknown[]>;
  /** A Secret with its `data` values base64-encoded, as the API returns them. */
  getSecret(
    namespace: string,
    name: string,
  ): Promise<{ data?: Record<string, string> } | undefined>;
  /**
   * The singleton `cluster` of a cluster-scoped OpenShift configuration kind; undefined when it,
   * or its CRD, is absent. Optional: readers that predate it read nothing.
   */
  getClusterConfig?(kind: ResourceIdentity): Promise<unknown>;
  /** Every object of a cluster-scoped kind; empty when the CRD is absent. Optional as above. */
  listClusterObjects?(kind: ResourceIdentity): Promise<unknown[]>;
  /** Any custom object by name; undefined when it, or its CRD, is absent. */
  getObject(kind: ResourceIdentity, namespace: string, name: string): Promise<unknown>;
  /**
   * Custom objects of a kind in a namespace, optionally by label selector (`k=v,k2`); empty
   * when the CRD is absent.
   */
  listObjects(
    kind: ResourceIdentity,
    namespace: string,
    labelSelector?: string,
  ): Promise<unknown[]>;
}

const LIST_PAGE_SIZE = 250;

/** ClusterObjectReader over @kubernetes/client-node. */
export class KubeClusterObjectReader implements ClusterObjectReader {
  private readonly customObjects: CustomObjectsApi;
  private readonly core: CoreV1Api;

  constructor(kubeConfig: KubeConfig, timeoutMs = API_SERVER_TIMEOUT_MS) {
    const config = apiConfigurationWithDeadline(kubeConfig, timeoutMs);
    this.customObjects = new CustomObjectsApi(config);
    this.core = new CoreV1Api(config);
  }

  async getInfrastructure(): Promise<unknown> {
    return notFoundAsUndefined(
      this.customObjects.getClusterCustomObject({
        group: INFRASTRUCTURE.group,
        version: INFRASTRUCTURE.version,
        plural: INFRASTRUCTURE.plural,
        name: 'cluster',
      }) as Promise<unknown>,
    );
  }

  getProxy(): Promise<unknown> {
    return this.getCluster(PROXY);
  }

  getCloudCredential(): Promise<unknown> {
    return this.getCluster(CLOUD_CREDENTIAL);
  }

  getAuthentication(): Promise<unknown> {
    return this.getCluster(AUTHENTICATION);
  }

  getClusterConfig(kind: ResourceIdentity): Promise<unknown> {
    return this.getCluster(kind);
  }

  async listClusterObjects(kind: ResourceIdentity): Promise<unknown[]> {
    const items: unknown[] = [];
    let continueToken: string | undefined;
    do {
      const page = (await notFoundAsUndefined(
        this.customObjects.listClusterCustomObject({
          group: kind.group,
          version: kind.version,
          plural: kind.plural,
          limit: LIST_PAGE_SIZE,
          ...(continueToken ? { _continue: continueToken } : {}),
        }) as Promise<{ items?: unknown[]; metadata?: { continue?: string } }>,
      )) ?? { items: [] };
      items.push(...(page.items ?? []));
      continueToken = page.metadata?.continue || undefined;
    } while (continueToken);
    return items;
  }

  /** The cluster-scoped singleton `cluster` of an OpenShift configuration kind. */
  private getCluster(kind: ResourceIdentity): Promise<unknown> {
    return notFoundAsUndefined(
      this.customObjects.getClusterCustomObject({
        group: kind.group,
        version: kind.version,
        plural: kind.plural,
        name: 'cluster',
      }) as Promise<unknown>,
    );
  }

  async listMachineSets(namespace: string): Promise<unknown[]> {
    return this.listObjects(MACHINE_SET, namespace);
  }

  async getObject(kind: ResourceIdentity, namespace: string, name: string): Promise<unknown> {
    return notFoundAsUndefined(
      this.customObjects.getNamespacedCustomObject({
        group: kind.group,
        version: kind.version,
        namespace,
        plural: kind.plural,
        name,
      }) as Promise<unknown>,
    );
  }

  async listObjects(
    kind: ResourceIdentity,
    namespace: string,
    labelSelector?: string,
  ): Promise<unknown[]> {
    const items: unknown[] = [];
    let continueToken: string | undefined;
    do {
      const page = (await notFoundAsUndefined(
        this.customObjects.listNamespacedCustomObject({
          group: kind.group,
          version: kind.version,
          namespace,
          plural: kind.plural,
          limit: LIST_PAGE_SIZE,
          ...(labelSelector ? { labelSelector } : {}),
          ...(continueToken ? { _continue: continueToken } : {}),
        }) as Promise<{ items?: unknown[]; metadata?: { continue?: string } }>,
      )) ?? { items: [] };
      items.push(...(page.items ?? []));
      continueToken = page.metadata?.continue || undefined;
    } while (continueToken);
    return items;
  }

  async getSecret(
    namespace: string,
    name: string,
  ): Promise<{ data?: Record<string, string> } | undefined> {
    const secret = await notFoundAsUndefined(this.core.readNamespacedSecret({ name, namespace }));
    return secret && { data: secret.data ?? {} };
  }
}

async function notFoundAsUndefined<T>(request: Promise<T>): Promise<T | undefined> {
  try {
    return await request;
  } catch (err) {
    if (err instanceof ApiException && err.code === 404) return undefined;
    throw err;
  }
}

/**
 * ClusterObjectReader over objects held in memory (e.g. parsed fixture YAML). Secrets written
 * with `stringData` are returned base64-encoded under `data`, as the API server would store them.
 */
export class InMemoryClusterObjectReader implements ClusterObjectReader {
  private readonly objects: KubeObject[];

  constructor(objects: unknown[]) {
    this.objects = objects.filter(isKubeObject).map((o) => structuredClone(o));
  }

  getInfrastructure(): Promise<unknown> {
    return Promise.resolve(
      this.objects.find(
        (o) =>
          o.kind === INFRASTRUCTURE.kind &&
          o.metadata?.name === 'cluster' &&
          isGroup(o, INFRASTRUCTURE.group),
      ),
    );
  }

  getProxy(): Promise<unknown> {
    return Promise.resolve(this.findCluster(PROXY));
  }

  getCloudCredential(): Promise<unknown> {
    return Promise.resolve(this.findCluster(CLOUD_CREDENTIAL));
  }

  getAuthentication(): Promise<unknown> {
    return Promise.resolve(this.findCluster(AUTHENTICATION));
  }

  getClusterConfig(kind: ResourceIdentity): Promise<unknown> {
    return Promise.resolve(this.findCluster(kind));
  }

  listClusterObjects(kind: ResourceIdentity): Promise<unknown[]> {
    return Promise.resolve(
      this.objects.filter((o) => o.kind === kind.kind && isGroup(o, kind.group)),
    );
  }

  private findCluster(kind: ResourceIdentity): KubeObject | undefined {
    return this.objects.find(
      (o) => o.kind === kind.kind && o.metadata?.name === 'cluster' && isGroup(o, kind.group),
    );
  }

  listMachineSets(namespace: string): Promise<unknown[]> {
    return Promise.resolve(
      this.objects.filter(
        (o) =>
          o.kind === MACHINE_SET.kind &&
          isGroup(o, MACHINE_SET.group) &&
          (o.metadata?.namespace ?? 'default') === namespace,
      ),
    );
  }

  getObject(kind: ResourceIdentity, namespace: string, name: string): Promise<unknown> {
    return Promise.resolve(
      this.objects.find(
        (o) =>
          o.kind === kind.kind &&
          isGroup(o, kind.group) &&
          o.metadata?.name === name &&
          (o.metadata?.namespace ?? 'default') === namespace,
      ),
    );
  }

  listObjects(
    kind: ResourceIdentity,
    namespace: string,
    labelSelector?: string,
  ): Promise<unknown[]> {
    const wanted = (labelSelector ?? '')
      .split(',')
      .filter(Boolean)
      .map((r) => r.split('=') as [string, string | undefined]);
    return Promise.resolve(
      this.objects.filter((o) => {
        if (o.kind !== kind.kind || !isGroup(o, kind.group)) return false;
        if ((o.metadata?.namespace ?? 'default') !== namespace) return false;
        const labels = o.metadata?.labels ?? {};
        return wanted.every(([k, v]) => (v === undefined ? k in labels : labels[k] === v));
      }),
    );
  }

  getSecret(
    namespace: string,
    name: string,
  ): Promise<{ data?: Record<string, string> } | undefined> {
    const secret = this.objects.find(
      (o) =>
        o.kind === 'Secret' &&
        o.apiVersion === 'v1' &&
        o.metadata?.name === name &&
        (o.metadata?.namespace ?? 'default') === namespace,
    );
    if (secret === undefined) return Promise.resolve(undefined);
    const data: Record<string, string> = { ...((secret.data as Record<string, string>) ?? {}) };
    for (const [key, value] of Object.entries(
      (secret.stringData as Record<string, string>) ?? {},
    )) {
      data[key] = Buffer.from(value, 'utf8').toString('base64');
    }
    return Promise.resolve({ data });
  }
}

interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

function isKubeObject(value: unknown): value is KubeObject {
  return typeof value === 'object' && value !== null && 'kind' in value;
}

function isGroup(object: KubeObject, group: string): boolean {
  return object.apiVersion?.startsWith(`${group}/`) ?? false;
}
