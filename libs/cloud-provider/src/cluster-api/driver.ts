import type { KarpenterDesiredState } from '@fleet/contracts';
import {
  CAPI_MACHINE,
  CLUSTER_NAME_LABEL,
  MACHINE_DEPLOYMENT,
  discoverClusterApi,
} from '@fleet/discovery';
import type { ClusterDriver, DriverContext, DriverRegistration } from '../driver.js';
import { canonical } from '../canonical.js';
import { OWNED_BY_SELECTOR, ownedLabels } from '../labels.js';
import type { KubeObject, NodeIdentityClaim, TargetedObject } from '../types.js';
import { checkMachineDeploymentsAllowed } from './admission.js';
import { awsClusterApiInfrastructure } from './aws/driver.js';
import { KARPENTER_NODE_GROUP_LABEL } from './constants.js';
import type { InfrastructureProvider } from './infrastructure.js';
import {
  CAPI_OPERAND_NAMESPACE,
  OPERAND_MANAGEMENT_KUBECONFIG_SECRET,
  managementServiceAccountName,
} from './operand.js';
import {
  ClusterApiCloudProvider,
  type ClusterApiRenderInfrastructure,
  type MachineLookup,
} from './provider.js';
import { CLUSTER_API, clusterApiLocation } from './registration.js';

/** Lifetime of the operand's management token: a week, renewed once half of it is gone. */
const TOKEN_SECONDS = 7 * 24 * 3600;
const EXPIRES_AT_KEY = 'expires-at';

/** A kubeconfig for the operand: the management server as the sidecar reaches it, the token. */
function managementKubeconfig(
  server: { server: string; certificateAuthorityData?: string; insecureSkipTLSVerify?: boolean },
  token: string,
  namespace: string,
): string {
  const q = (s: string) => JSON.stringify(s);
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '  - name: management',
    '    cluster:',
    `      server: ${q(server.server)}`,
    ...(server.certificateAuthorityData
      ? [`      certificate-authority-data: ${q(server.certificateAuthorityData)}`]
      : []),
    ...(server.insecureSkipTLSVerify ? ['      insecure-skip-tls-verify: true'] : []),
    'users:',
    '  - name: karpenter',
    '    user:',
    `      token: ${q(token)}`,
    'contexts:',
    '  - name: management',
    '    context:',
    '      cluster: management',
    '      user: karpenter',
    `      namespace: ${q(namespace)}`,
    'current-context: management',
    '',
  ].join('\n');
}

/**
 * The infrastructure sub-seam: one entry per infrastructure provider, by the name discovery
 * gives it (the Cluster's infrastructureRef kind). Each builds its cloud clients from the env.
 */
export interface ClusterApiInfrastructureEntry {
  readonly parser: InfrastructureProvider['template'];
  create(
    env: DriverContext['env'],
    failureDomains: readonly string[],
  ): InfrastructureProvider & { close(): void };
}

const INFRASTRUCTURE: readonly ClusterApiInfrastructureEntry[] = [awsClusterApiInfrastructure];

/** What `registerCluster` accepts as a CAPI cluster's infrastructure provider. */
export const CLUSTER_API_INFRASTRUCTURE_PROVIDERS: readonly string[] = INFRASTRUCTURE.map(
  (i) => i.parser.name,
);

/**
 * A Cluster API workload cluster: discovery of the Cluster and its workers on the management
 * cluster, capacities from the infrastructure provider's cloud, node identity from Machines.
 */
class ClusterApiDriver implements ClusterDriver<ClusterApiRenderInfrastructure> {
  readonly platform = 'CAPI';
  readonly topology = 'STANDALONE';
  readonly provider: ClusterApiCloudProvider;
  readonly statusSurfaces = [] as const;
  private readonly location: ReturnType<typeof clusterApiLocation>;
  private readonly infrastructures = new Map<string, InfrastructureProvider & { close(): void }>();

  constructor(private readonly context: DriverContext) {
    this.location = clusterApiLocation(context.env);
    this.provider = new ClusterApiCloudProvider({
      namespace: this.location.namespace,
      access: context.sameApiServer === false ? 'separate-cluster' : 'same-cluster',
      templateKinds: INFRASTRUCTURE.map((i) => i.parser.templateKind),
    });
  }

  async discover() {
    const { clusterName, namespace } = this.location;
    if (!clusterName)
      return {
        ok: false as const,
        reason: 'ClusterNotFound' as const,
        message:
          'CLUSTER_API_CLUSTER_NAME: the sidecar was not told the name of the Cluster (cluster.x-k8s.io) it runs Karpenter for',
      };
    return discoverClusterApi({
      reader: this.context.reader('management'),
      clusterName,
      namespace,
      infrastructure: INFRASTRUCTURE.map((i) => i.parser),
    });
  }

  private infrastructure(infra: ClusterApiRenderInfrastructure) {
    let provider = this.infrastructures.get(infra.infrastructureProvider);
    if (!provider) {
      const entry = INFRASTRUCTURE.find((i) => i.parser.name === infra.infrastructureProvider);
      if (!entry) return undefined;
      provider = entry.create(this.context.env, infra.failureDomains);
      this.infrastructures.set(infra.infrastructureProvider, provider);
    }
    return provider;
  }

  async prepare(infra: ClusterApiRenderInfrastructure, desired: KarpenterDesiredState) {
    const infrastructure = this.infrastructure(infra);
    if (!infrastructure)
      return {
        ok: false as const,
        reason: 'UnsupportedInfrastructure',
        message: `no infrastructure provider ${infra.infrastructureProvider} in this sidecar`,
      };
    const types = desired.allowedInstanceTypes ?? [infra.template.instanceType];
    const described = await infrastructure.describeCapacities(types);
    if (!described.ok)
      return {
        ok: false as const,
        reason: 'InstanceTypeNotOffered',
        message: `allowedInstanceTypes: ${described.message}`,
      };
    const templateSpecs = Object.fromEntries(
      types.map((t) => [t, infrastructure.templateSpecFor(infra.template, t)]),
    );
    return {
      ok: true as const,
      infra: {
        ...infra,
        nodeGroups: {
          capacities: described.capacities,
          templateKind: infrastructure.templateKind,
          templateSpecs,
        },
      },
    };
  }

  async checkWrites(desired: readonly TargetedObject[]) {
    const probe = desired.find(
      ({ target, object }) =>
        target === 'management' &&
        object.kind === MACHINE_DEPLOYMENT.kind &&
        object.apiVersion === MACHINE_DEPLOYMENT.apiVersion,
    );
    const dryRunCreate = this.context.dryRunCreate;
    if (!probe || !dryRunCreate) return undefined;
    return checkMachineDeploymentsAllowed(
      (object) => dryRunCreate('management', object),
      probe.object,
    );
  }

  nodeIdentity(infra: ClusterApiRenderInfrastructure) {
    const reader = this.context.reader('management');
    const lookup: MachineLookup = async () => {
      const [machines, deployments] = await Promise.all([
        reader.listObjects(
          CAPI_MACHINE,
          infra.namespace,
          `${CLUSTER_NAME_LABEL}=${infra.clusterName}`,
        ),
        reader.listObjects(
          MACHINE_DEPLOYMENT,
          infra.namespace,
          `${OWNED_BY_SELECTOR},${KARPENTER_NODE_GROUP_LABEL}=${infra.namespace},${CLUSTER_NAME_LABEL}=${infra.clusterName}`,
        ),
      ]);
      return {
        machines: machines as KubeObject[],
        fleetDeployments: new Set((deployments as KubeObject[]).map((d) => d.metadata.name)),
      };
    };
    return (claims: readonly NodeIdentityClaim[]) =>
      this.provider.verifyNodeIdentity(claims, lookup);
  }

  /**
   * With a separate management cluster, the operand reads the Cluster API objects as the
   * management ServiceAccount the render created: a kubeconfig with a bound token of it, in the
   * Secret the Deployment mounts (CLUSTER_API_KUBECONFIG). The token is kept until half its
   * lifetime is gone, so applying the same order again does not rewrite the Secret.
   */
  async renderAfterApply(infra: ClusterApiRenderInfrastructure): Promise<TargetedObject[]> {
    const { requestToken, connection } = this.context;
    if (this.context.sameApiServer !== false || !requestToken || !connection) return [];
    const server = connection('management');
    const serviceAccount = managementServiceAccountName(infra);
    const live = await this.liveKubeconfig();
    let kubeconfig: string;
    let expires: string;
    if (live.kubeconfig && live.expiresAt !== undefined && !this.renewalDue(live, server.server)) {
      kubeconfig = live.kubeconfig;
      expires = new Date(live.expiresAt).toISOString();
    } else {
      const issued = await requestToken(
        'management',
        infra.namespace,
        serviceAccount,
        TOKEN_SECONDS,
      );
      kubeconfig = managementKubeconfig(server, issued.token, infra.namespace);
      expires = issued.expirationTimestamp;
    }
    return [
      {
        target: 'workload',
        object: canonical<KubeObject>({
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: {
            name: OPERAND_MANAGEMENT_KUBECONFIG_SECRET,
            namespace: CAPI_OPERAND_NAMESPACE,
            labels: ownedLabels(),
          },
          type: 'Opaque',
          data: {
            kubeconfig: Buffer.from(kubeconfig).toString('base64'),
            [EXPIRES_AT_KEY]: Buffer.from(expires).toString('base64'),
          },
        }),
      },
    ];
  }

  /**
   * With a separate management cluster, whether the operand's token must be renewed: the Secret
   * is missing or unreadable, its token is past half its lifetime, or it names another server.
   * One read of the Secret; renewal itself is renderAfterApply's, when the order is applied.
   */
  async credentialsDue(): Promise<boolean> {
    const { requestToken, connection } = this.context;
    if (this.context.sameApiServer !== false || !requestToken || !connection) return false;
    return this.renewalDue(await this.liveKubeconfig(), connection('management').server);
  }

  /** The kubeconfig and expiry in the operand's Secret, as the fleet last wrote them. */
  private async liveKubeconfig(): Promise<{ kubeconfig?: string; expiresAt?: number }> {
    const live = await this.context
      .reader('workload')
      .getSecret(CAPI_OPERAND_NAMESPACE, OPERAND_MANAGEMENT_KUBECONFIG_SECRET);
    const decode = (v: string | undefined) =>
      v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8');
    const expiresAt = Date.parse(decode(live?.data?.[EXPIRES_AT_KEY]) ?? '');
    const kubeconfig = decode(live?.data?.kubeconfig);
    return {
      ...(kubeconfig ? { kubeconfig } : {}),
      ...(Number.isFinite(expiresAt) ? { expiresAt } : {}),
    };
  }

  /** A token is kept until half its lifetime is gone, and only for the server it was made for. */
  private renewalDue(live: { kubeconfig?: string; expiresAt?: number }, server: string): boolean {
    const now = this.context.now?.() ?? Date.now();
    return !(
      live.kubeconfig &&
      live.expiresAt !== undefined &&
      live.expiresAt - now > (TOKEN_SECONDS * 1000) / 2 &&
      live.kubeconfig.includes(`server: ${JSON.stringify(server)}`)
    );
  }

  close(): void {
    for (const i of this.infrastructures.values()) i.close();
    this.infrastructures.clear();
  }
}

/** Cluster API (registration.ts), with its driver. */
export const CLUSTER_API_DRIVER: DriverRegistration = {
  ...CLUSTER_API,
  create: (context) => new ClusterApiDriver(context),
};
