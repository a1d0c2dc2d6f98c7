import { readFileSync } from 'node:fs';
import { FIELD_MANAGER } from '@fleet/contracts';
import {
  API_SERVER_TIMEOUT_MS,
  PATCH_CONTENT_TYPE,
  RestClient,
  type RestRequest,
} from '@fleet/discovery';
import {
  ApiException,
  KubeConfig,
  type KubernetesObject,
  type V1APIGroupList,
  type V1APIResource,
  type V1CertificateSigningRequest,
  type V1CertificateSigningRequestCondition,
  type V1SelfSubjectAccessReview,
  type V1SelfSubjectReview,
  type AuthenticationV1TokenRequest,
} from '@kubernetes/client-node';
import { pooledConnections } from './pooled-connections.js';

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

export const isNotFound = (err: unknown): boolean =>
  err instanceof ApiException && err.code === 404;
export const isForbidden = (err: unknown): boolean =>
  err instanceof ApiException && err.code === 403;
export const isConflict = (err: unknown): boolean =>
  err instanceof ApiException && err.code === 409;

/** The API server's discovery does not list a kind under its apiVersion. */
export class UnknownKindError extends Error {
  constructor(
    readonly apiVersion: string,
    readonly kind: string,
  ) {
    super(`Unrecognized API version and kind: ${apiVersion} ${kind}`);
    this.name = 'UnknownKindError';
  }
}

/** The API server does not serve this kind (its CRD is not installed). */
export const isUnknownKind = (err: unknown): boolean =>
  isNotFound(err) || err instanceof UnknownKindError;

/** Human-readable cause of a failed API call, with the API server's own message when it has one. */
export function describeKubeError(err: unknown): string {
  if (err instanceof ApiException) {
    const body: unknown = typeof err.body === 'string' ? safeJson(err.body) : err.body;
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

/** `/api/v1` for the core group, `/apis/<group>/<version>` for any other. */
const apiVersionPath = (apiVersion: string) =>
  apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;

type ResourceAction = 'create' | 'list' | 'object';

/**
 * The one place the sidecar talks to an API server: server-side apply, list, read, delete, the
 * subresources and reviews it needs. Objects are addressed by apiVersion and kind, mapped to
 * their resource by the API server's discovery (as kubectl and client-node's KubernetesObjectApi
 * do), on the plain JSON REST client (`RestClient`: why not client-node's generated clients).
 */
export class ClusterClient {
  readonly rest: RestClient;
  /** Each apiVersion's resources, from discovery; read again when a kind is not in it (a CRD since). */
  private readonly resources = new Map<string, V1APIResource[]>();
  private readonly defaultNamespace: string;

  constructor(
    readonly kubeConfig: KubeConfig,
    readonly timeoutMs = API_SERVER_TIMEOUT_MS,
  ) {
    this.rest = new RestClient(kubeConfig, timeoutMs);
    this.defaultNamespace =
      kubeConfig.getContextObject(kubeConfig.getCurrentContext())?.namespace ?? 'default';
  }

  /**
   * The versions the API server serves of an API group (discovery, allowed to every
   * authenticated user); empty while no CRD of the group is installed.
   */
  async servedVersions(group: string): Promise<string[]> {
    const groups = await this.rest.get<V1APIGroupList>('/apis');
    return (groups.groups.find((g) => g.name === group)?.versions ?? []).map((v) => v.version);
  }

  /** A bound token of a service account (TokenRequest), valid for `expirationSeconds`. */
  async requestToken(
    namespace: string,
    serviceAccount: string,
    expirationSeconds: number,
  ): Promise<{ token: string; expirationTimestamp: string }> {
    const review = await this.rest.request<AuthenticationV1TokenRequest>(
      'POST',
      `/api/v1/namespaces/${namespace}/serviceaccounts/${serviceAccount}/token`,
      {
        body: {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          spec: { audiences: [], expirationSeconds },
        },
      },
    );
    const token = review.status?.token;
    if (!token)
      throw new Error(`TokenRequest for ${namespace}/${serviceAccount} returned no token`);
    return {
      token,
      expirationTimestamp: new Date(String(review.status?.expirationTimestamp)).toISOString(),
    };
  }

  /** Where this client connects, for a kubeconfig handed to someone else. */
  connection(): {
    server: string;
    certificateAuthorityData?: string;
    insecureSkipTLSVerify?: boolean;
  } {
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    const ca =
      cluster.caData ??
      (cluster.caFile ? readFileSync(cluster.caFile).toString('base64') : undefined);
    return {
      server: cluster.server,
      ...(ca ? { certificateAuthorityData: ca } : {}),
      ...(cluster.skipTLSVerify ? { insecureSkipTLSVerify: true } : {}),
    };
  }

  static fromKubeconfigFile(path: string | undefined): ClusterClient {
    const kc = new KubeConfig();
    if (path) kc.loadFromFile(path);
    else kc.loadFromDefault();
    return new ClusterClient(pooledConnections(kc));
  }

  /**
   * The user the API server authenticates this client as (SelfSubjectReview, allowed to every
   * authenticated user): what admission policies compare `request.userInfo.username` with.
   */
  async whoAmI(): Promise<string> {
    const review = await this.rest.request<V1SelfSubjectReview>(
      'POST',
      '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } },
    );
    const username = review.status?.userInfo?.username;
    if (!username) throw new Error('SelfSubjectReview returned no username');
    return username;
  }

  /**
   * Whether the API server authorizes this client for one request, by a SelfSubjectAccessReview
   * (allowed to every authenticated user).
   */
  async allowed(attributes: {
    verb: string;
    resource: string;
    group?: string;
    namespace?: string;
  }): Promise<boolean> {
    const review = await this.rest.request<V1SelfSubjectAccessReview>(
      'POST',
      '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
      {
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: { resourceAttributes: attributes },
        },
      },
    );
    return review.status?.allowed === true;
  }

  /** Server-side apply as the fleet's field manager; force, since the fleet owns these fields. */
  apply<T extends KubernetesObject>(object: T, fieldManager = FIELD_MANAGER): Promise<T> {
    return this.patch(object, PATCH_CONTENT_TYPE.apply, { fieldManager, force: true });
  }

  /**
   * Server-side apply with `dryRun=All` (a plan): defaulting, validation and admission run and
   * the answer is what the API server would store; nothing is stored.
   */
  dryRunApply<T extends KubernetesObject>(object: T, fieldManager = FIELD_MANAGER): Promise<T> {
    return this.patch(object, PATCH_CONTENT_TYPE.apply, {
      fieldManager,
      force: true,
      dryRun: 'All',
    });
  }

  /** A delete with `dryRun=All`: admission runs, nothing is deleted. */
  async dryRunDelete(ref: ObjectRef): Promise<void> {
    await this.rest.request('DELETE', await this.pathOf(ref, 'object'), {
      query: { dryRun: 'All', propagationPolicy: 'Background' },
    });
  }

  /** Server-side apply to the `/status` subresource of a cluster-scoped custom object. */
  applyClusterCustomObjectStatus<T extends KubernetesObject>(
    object: T,
    plural: string,
    fieldManager = FIELD_MANAGER,
  ): Promise<T> {
    return this.applyStatus(object, plural, undefined, fieldManager);
  }

  /**
   * Server-side apply to the `/status` subresource of a namespaced custom object (hosted:
   * HostedControlPlane.status.autoNode, as HyperShift's karpenter-operator writes it).
   */
  applyNamespacedCustomObjectStatus<T extends KubernetesObject>(
    object: T,
    plural: string,
    fieldManager = FIELD_MANAGER,
  ): Promise<T> {
    return this.applyStatus(object, plural, object.metadata?.namespace ?? '', fieldManager);
  }

  private applyStatus<T extends KubernetesObject>(
    object: T,
    plural: string,
    namespace: string | undefined,
    fieldManager: string,
  ): Promise<T> {
    const apiVersion = object.apiVersion ?? '';
    if (!apiVersion.includes('/'))
      throw new Error(`${object.kind}: not a custom resource apiVersion`);
    const scope = namespace === undefined ? '' : `/namespaces/${namespace}`;
    const name = encodeURIComponent(object.metadata?.name ?? '');
    return this.rest.request<T>(
      'PATCH',
      `${apiVersionPath(apiVersion)}${scope}/${plural}/${name}/status`,
      {
        body: object,
        contentType: PATCH_CONTENT_TYPE.apply,
        query: { fieldManager, force: true },
      },
    );
  }

  /**
   * JSON merge patch (RFC 7386): for fields that must also lose what other managers set in
   * them, which server-side apply cannot take away.
   */
  mergePatch<T extends KubernetesObject>(patch: T, fieldManager = FIELD_MANAGER): Promise<T> {
    return this.patch(patch, PATCH_CONTENT_TYPE.merge, { fieldManager });
  }

  async create<T extends KubernetesObject>(object: T): Promise<T> {
    return this.rest.request<T>('POST', await this.pathOf(refOf(object), 'create'), {
      body: object,
    });
  }

  /** A server-side dry-run create: the API server's admission runs, nothing is stored. */
  async dryRunCreate<T extends KubernetesObject>(object: T): Promise<void> {
    await this.rest.request('POST', await this.pathOf(refOf(object), 'create'), {
      body: object,
      query: { dryRun: 'All' },
    });
  }

  /**
   * Adds a condition through the CSR's `/approval` subresource (the only way a CSR is approved),
   * re-reading once when someone else wrote the CSR in between.
   */
  async addCsrCondition(
    name: string,
    condition: Pick<V1CertificateSigningRequestCondition, 'type' | 'status' | 'reason' | 'message'>,
  ): Promise<V1CertificateSigningRequest> {
    const path = `/apis/certificates.k8s.io/v1/certificatesigningrequests/${encodeURIComponent(name)}`;
    for (let attempt = 0; ; attempt++) {
      const csr = await this.rest.get<V1CertificateSigningRequest>(path);
      const conditions = [...(csr.status?.conditions ?? []), condition];
      try {
        return await this.rest.request<V1CertificateSigningRequest>('PUT', `${path}/approval`, {
          body: { ...csr, status: { ...csr.status, conditions } },
        });
      } catch (err) {
        if (!isConflict(err) || attempt >= 2) throw err;
      }
    }
  }

  /** The object, or undefined when it is absent or its API group is not served (discovery's 404). */
  async read<T extends KubernetesObject>(ref: ObjectRef): Promise<T | undefined> {
    try {
      return await this.rest.getIfExists<T>(await this.pathOf(ref, 'object'));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async list<T extends KubernetesObject>(
    apiVersion: string,
    kind: string,
    options: { namespace?: string; labelSelector?: string; fieldSelector?: string } = {},
  ): Promise<T[]> {
    const path = await this.collectionPathOf(apiVersion, kind, options.namespace);
    const { labelSelector, fieldSelector } = options;
    return (await this.rest.list<T>(path, { labelSelector, fieldSelector })).items;
  }

  /** Deletes; an object already gone counts as deleted. */
  async delete(ref: ObjectRef): Promise<void> {
    try {
      await this.rest.request('DELETE', await this.pathOf(ref, 'object'), {
        query: { propagationPolicy: 'Background' },
      });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  /** The path of a kind's collection, in a namespace or (none given) across all of them. */
  collectionPathOf(apiVersion: string, kind: string, namespace?: string): Promise<string> {
    return this.pathOf({ apiVersion, kind, name: '', ...(namespace ? { namespace } : {}) }, 'list');
  }

  private async patch<T extends KubernetesObject>(
    object: T,
    contentType: string,
    query: RestRequest['query'],
  ): Promise<T> {
    return this.rest.request<T>('PATCH', await this.pathOf(refOf(object), 'object'), {
      body: object,
      contentType,
      ...(query ? { query } : {}),
    });
  }

  /**
   * The path of an object (or, to create or list, of its collection): its kind's resource from
   * discovery; a namespaced kind with no namespace is in the kubeconfig context's (as
   * KubernetesObjectApi's `specUriPath`), except for a list, which then spans every namespace.
   */
  private async pathOf(ref: ObjectRef, action: ResourceAction): Promise<string> {
    const resource = await this.resourceOf(ref.apiVersion, ref.kind);
    const namespace =
      resource.namespaced && action !== 'list'
        ? (ref.namespace ?? this.defaultNamespace)
        : resource.namespaced
          ? ref.namespace
          : undefined;
    const scope = namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
    const collection = `${apiVersionPath(ref.apiVersion)}${scope}/${resource.name}`;
    if (action !== 'object') return collection;
    if (!ref.name) throw new Error(`${ref.kind}: metadata.name is required`);
    return `${collection}/${encodeURIComponent(ref.name)}`;
  }

  private async resourceOf(apiVersion: string, kind: string): Promise<V1APIResource> {
    const find = () =>
      this.resources.get(apiVersion)?.find((r) => r.kind === kind && !r.name.includes('/'));
    const cached = find();
    if (cached) return cached;
    // A group version not served at all is the API server's 404 (isNotFound), as client-node's.
    const list = await this.rest.get<{ resources: V1APIResource[] }>(apiVersionPath(apiVersion));
    this.resources.set(apiVersion, list.resources);
    const resource = find();
    if (!resource) throw new UnknownKindError(apiVersion, kind);
    return resource;
  }
}

const refOf = (object: KubernetesObject): ObjectRef => {
  if (!object.apiVersion || !object.kind)
    throw new Error('an object needs its apiVersion and kind to be sent');
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    name: object.metadata?.name ?? '',
    ...(object.metadata?.namespace ? { namespace: object.metadata.namespace } : {}),
  };
};
