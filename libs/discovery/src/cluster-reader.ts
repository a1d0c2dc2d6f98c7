import {
  AUTHENTICATION,
  CLOUD_CREDENTIAL,
  INFRASTRUCTURE,
  MACHINE_SET,
  PROXY,
  SECRET,
  collectionPath,
  type ResourceIdentity,
} from '@fleet/contracts';
import { ApiException, type KubeConfig } from '@kubernetes/client-node';
import { API_SERVER_TIMEOUT_MS, RestClient } from './rest-client.js';

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

const objectPath = (kind: ResourceIdentity, name: string, namespace?: string) =>
  `${collectionPath(kind, namespace)}/${encodeURIComponent(name)}`;

/** ClusterObjectReader over an API server (404 — the object or its CRD absent — as absent). */
export class KubeClusterObjectReader implements ClusterObjectReader {
  private readonly rest: RestClient;

  constructor(kubeConfig: KubeConfig, timeoutMs = API_SERVER_TIMEOUT_MS) {
    this.rest = new RestClient(kubeConfig, timeoutMs);
  }

  getInfrastructure(): Promise<unknown> {
    return this.getCluster(INFRASTRUCTURE);
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

  listClusterObjects(kind: ResourceIdentity): Promise<unknown[]> {
    return this.listIfServed(collectionPath(kind));
  }

  /** The cluster-scoped singleton `cluster` of an OpenShift configuration kind. */
  private getCluster(kind: ResourceIdentity): Promise<unknown> {
    return this.rest.getIfExists(objectPath(kind, 'cluster'));
  }

  listMachineSets(namespace: string): Promise<unknown[]> {
    return this.listObjects(MACHINE_SET, namespace);
  }

  getObject(kind: ResourceIdentity, namespace: string, name: string): Promise<unknown> {
    return this.rest.getIfExists(objectPath(kind, name, namespace));
  }

  listObjects(
    kind: ResourceIdentity,
    namespace: string,
    labelSelector?: string,
  ): Promise<unknown[]> {
    return this.listIfServed(collectionPath(kind, namespace), labelSelector);
  }

  async getSecret(
    namespace: string,
    name: string,
  ): Promise<{ data?: Record<string, string> } | undefined> {
    const secret = await this.rest.getIfExists<{ data?: Record<string, string> }>(
      objectPath(SECRET, name, namespace),
    );
    return secret && { data: secret.data ?? {} };
  }

  /** Every object of a collection; none while its kind is not served (404). */
  private async listIfServed(path: string, labelSelector?: string): Promise<unknown[]> {
    try {
      return (await this.rest.list<unknown>(path, { labelSelector }, LIST_PAGE_SIZE)).items;
    } catch (err) {
      if (err instanceof ApiException && err.code === 404) return [];
      throw err;
    }
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
