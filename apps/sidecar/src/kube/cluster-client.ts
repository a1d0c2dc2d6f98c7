import { readFileSync } from 'node:fs';
import { FIELD_MANAGER } from '@fleet/contracts';
import { API_SERVER_TIMEOUT_MS, apiConfigurationWithDeadline } from '@fleet/discovery';
import {
  ApiException,
  AuthenticationV1Api,
  AuthorizationV1Api,
  CertificatesV1Api,
  ApisApi,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  loadYaml,
  setHeaderOptions,
  type Configuration,
  type KubernetesObject,
  type V1CertificateSigningRequest,
  type V1CertificateSigningRequestCondition,
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

/** The API server does not serve this kind (its CRD is not installed). */
export const isUnknownKind = (err: unknown): boolean =>
  isNotFound(err) ||
  (err instanceof Error && err.message.includes('Unrecognized API version and kind'));

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

/**
 * The object as the client's typed model holds it. KubernetesObjectApi serializes a built-in
 * kind through its generated model, which reads the model's property names: a plain object
 * with the wire names loses every field whose name differs (`default`, `enum`,
 * `x-kubernetes-validations`, ... of a CRD's schema), so a CRD was installed without its
 * defaults and CEL rules. Loading the JSON as YAML (JSON is YAML) maps wire names to the model's
 * first, and serializing maps them back. Custom resources pass through as they are.
 */
export const toClientModel = <T extends KubernetesObject>(object: T): T =>
  loadYaml<T>(JSON.stringify(object));

/** KubernetesObjectApi.makeApiClient, on a configuration of our own. */
class ObjectApi extends KubernetesObjectApi {
  constructor(config: Configuration, kubeConfig: KubeConfig) {
    super(config);
    this.setDefaultNamespace(kubeConfig);
  }
}

/** The one place the sidecar talks to an API server: server-side apply, list, read, delete. */
export class ClusterClient {
  readonly objects: KubernetesObjectApi;
  private readonly customObjects: CustomObjectsApi;
  private readonly certificates: CertificatesV1Api;
  private readonly authentication: AuthenticationV1Api;
  private readonly authorization: AuthorizationV1Api;
  private readonly core: CoreV1Api;
  private readonly apis: ApisApi;

  constructor(
    readonly kubeConfig: KubeConfig,
    readonly timeoutMs = API_SERVER_TIMEOUT_MS,
  ) {
    const config = apiConfigurationWithDeadline(kubeConfig, timeoutMs);
    this.objects = new ObjectApi(config, kubeConfig);
    this.customObjects = new CustomObjectsApi(config);
    this.certificates = new CertificatesV1Api(config);
    this.authentication = new AuthenticationV1Api(config);
    this.authorization = new AuthorizationV1Api(config);
    this.core = new CoreV1Api(config);
    this.apis = new ApisApi(config);
  }

  /**
   * The versions the API server serves of an API group (discovery, allowed to every
   * authenticated user); empty while no CRD of the group is installed.
   */
  async servedVersions(group: string): Promise<string[]> {
    const groups = await this.apis.getAPIVersions();
    return (groups.groups.find((g) => g.name === group)?.versions ?? []).map((v) => v.version);
  }

  /** A bound token of a service account (TokenRequest), valid for `expirationSeconds`. */
  async requestToken(
    namespace: string,
    serviceAccount: string,
    expirationSeconds: number,
  ): Promise<{ token: string; expirationTimestamp: string }> {
    const review = await this.core.createNamespacedServiceAccountToken({
      namespace,
      name: serviceAccount,
      body: { spec: { audiences: [], expirationSeconds } },
    });
    const token = review.status?.token;
    if (!token)
      throw new Error(`TokenRequest for ${namespace}/${serviceAccount} returned no token`);
    const expires = review.status?.expirationTimestamp;
    return {
      token,
      expirationTimestamp: (expires instanceof Date
        ? expires
        : new Date(String(expires))
      ).toISOString(),
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
    const review = await this.authentication.createSelfSubjectReview({
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
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
    const review = await this.authorization.createSelfSubjectAccessReview({
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectAccessReview',
        spec: { resourceAttributes: attributes },
      },
    });
    return review.status?.allowed === true;
  }

  /** Server-side apply as the fleet's field manager; force, since the fleet owns these fields. */
  async apply<T extends KubernetesObject>(object: T, fieldManager = FIELD_MANAGER): Promise<T> {
    return this.objects.patch<T>(
      toClientModel(object),
      undefined,
      undefined,
      fieldManager,
      true,
      PatchStrategy.ServerSideApply,
    );
  }

  /**
   * Server-side apply with `dryRun=All` (a plan): defaulting, validation and admission run and
   * the answer is what the API server would store; nothing is stored.
   */
  async dryRunApply<T extends KubernetesObject>(
    object: T,
    fieldManager = FIELD_MANAGER,
  ): Promise<T> {
    return this.objects.patch<T>(
      toClientModel(object),
      undefined,
      'All',
      fieldManager,
      true,
      PatchStrategy.ServerSideApply,
    );
  }

  /** A delete with `dryRun=All`: admission runs, nothing is deleted. */
  async dryRunDelete(ref: ObjectRef): Promise<void> {
    await this.objects.delete(
      {
        apiVersion: ref.apiVersion,
        kind: ref.kind,
        metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
      },
      undefined,
      'All',
      undefined,
      undefined,
      'Background',
    );
  }

  /**
   * Server-side apply to the `/status` subresource of a cluster-scoped custom object.
   * KubernetesObjectApi cannot address subresources, so this goes through CustomObjectsApi with
   * the apply content type put back by a header middleware (the generated client would send
   * JSON patch otherwise; JSON is valid apply YAML).
   */
  async applyClusterCustomObjectStatus<T extends KubernetesObject>(
    object: T,
    plural: string,
    fieldManager = FIELD_MANAGER,
  ): Promise<T> {
    const [group, version] = (object.apiVersion ?? '').split('/');
    if (!group || !version) throw new Error(`${object.kind}: not a custom resource apiVersion`);
    return (await this.customObjects.patchClusterCustomObjectStatus(
      {
        group,
        version,
        plural,
        name: object.metadata?.name ?? '',
        body: object,
        fieldManager,
        force: true,
      },
      setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
    )) as T;
  }

  /**
   * Server-side apply to the `/status` subresource of a namespaced custom object (hosted:
   * HostedControlPlane.status.autoNode, as HyperShift's karpenter-operator writes it).
   */
  async applyNamespacedCustomObjectStatus<T extends KubernetesObject>(
    object: T,
    plural: string,
    fieldManager = FIELD_MANAGER,
  ): Promise<T> {
    const [group, version] = (object.apiVersion ?? '').split('/');
    if (!group || !version) throw new Error(`${object.kind}: not a custom resource apiVersion`);
    return (await this.customObjects.patchNamespacedCustomObjectStatus(
      {
        group,
        version,
        plural,
        namespace: object.metadata?.namespace ?? '',
        name: object.metadata?.name ?? '',
        body: object,
        fieldManager,
        force: true,
      },
      setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
    )) as T;
  }

  /**
   * JSON merge patch (RFC 7386): for fields that must also lose what other managers set in
   * them, which server-side apply cannot take away.
   */
  async mergePatch<T extends KubernetesObject>(patch: T, fieldManager = FIELD_MANAGER): Promise<T> {
    return this.objects.patch<T>(
      toClientModel(patch),
      undefined,
      undefined,
      fieldManager,
      undefined,
      PatchStrategy.MergePatch,
    );
  }

  async create<T extends KubernetesObject>(object: T): Promise<T> {
    return this.objects.create<T>(toClientModel(object));
  }

  /** A server-side dry-run create: the API server's admission runs, nothing is stored. */
  async dryRunCreate<T extends KubernetesObject>(object: T): Promise<void> {
    await this.objects.create<T>(toClientModel(object), undefined, 'All');
  }

  /**
   * Adds a condition through the CSR's `/approval` subresource (the only way a CSR is approved),
   * re-reading once when someone else wrote the CSR in between.
   */
  async addCsrCondition(
    name: string,
    condition: Pick<V1CertificateSigningRequestCondition, 'type' | 'status' | 'reason' | 'message'>,
  ): Promise<V1CertificateSigningRequest> {
    for (let attempt = 0; ; attempt++) {
      const csr = await this.certificates.readCertificateSigningRequest({ name });
      const conditions = [...(csr.status?.conditions ?? []), condition];
      try {
        return await this.certificates.replaceCertificateSigningRequestApproval({
          name,
          body: { ...csr, status: { ...csr.status, conditions } },
        });
      } catch (err) {
        if (!isConflict(err) || attempt >= 2) throw err;
      }
    }
  }

  async read<T extends KubernetesObject>(ref: ObjectRef): Promise<T | undefined> {
    try {
      const object: KubernetesObject = await this.objects.read({
        apiVersion: ref.apiVersion,
        kind: ref.kind,
        metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
      });
      return object as T;
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
        options.fieldSelector,
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
