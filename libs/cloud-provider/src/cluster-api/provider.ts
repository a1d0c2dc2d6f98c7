import {
  CLUSTER_ROLE,
  CLUSTER_ROLE_BINDING,
  DEPLOYMENT,
  NAMESPACE,
  NODECLAIM,
  NODEPOOL,
  ROLE,
  ROLE_BINDING,
  SECRET,
  SERVICE_ACCOUNT,
  DEFAULT_KARPENTER_VERSION,
  KarpenterVersion,
  type KarpenterDesiredState,
  type NodeClassOverrides,
} from '@fleet/contracts';
import { MACHINE_DEPLOYMENT, type ClusterApiInfrastructure } from '@fleet/discovery';
import { karpenterCrdDirectory } from '../aws/constants.js';
import { canonical } from '../canonical.js';
import { renderClusterOperator } from '../cluster-operator.js';
import { renderNodePools } from '../nodepools.js';
import { NODE_LEASE_NAMESPACE } from '../rbac.js';
import type {
  CloudProvider,
  CustomResourceDefinitionSource,
  KubeObject,
  NodeClassConfigKind,
  NodeClassEnforcement,
  NodeIdentityClaim,
  NodeIdentityVerdict,
  OperatorStatusInput,
  OwnedKind,
  RelatedObject,
  ResourceIdentity,
  TargetedObject,
} from '../types.js';
import { CLUSTER_API_NODE_CLASS, DEFAULT_CLUSTER_API_NODE_CLASS_NAME } from './constants.js';
import type { InstanceCapacity } from './infrastructure.js';
import { renderKarpenterNodeGroups } from './machine-deployments.js';
import { validateClusterApiNodeClassOverrides } from './registration.js';
import { verifyMachineNodeIdentity } from './node-identity.js';
import {
  CAPI_OPERAND_NAME,
  CAPI_OPERAND_NAMESPACE,
  CAPI_SERVICE_ACCOUNT_NAME,
  DEFAULT_CLUSTER_API_KARPENTER_IMAGE,
  WORKLOAD_CLUSTER_ROLE,
  renderClusterApiOperand,
  renderDefaultClusterApiNodeClass,
  type ManagementAccess,
} from './operand.js';

/**
 * What rendering needs beyond discovery, looked up in the cloud by the driver before the
 * synchronous render (ClusterDriver.prepare): the allowed instance types' capacities and the
 * infrastructure template spec of each.
 */
export interface ClusterApiNodeGroups {
  capacities: InstanceCapacity[];
  templateKind: ResourceIdentity;
  templateSpecs: Record<string, Record<string, unknown>>;
}

export interface ClusterApiRenderInfrastructure extends ClusterApiInfrastructure {
  /** Absent until the driver prepared it; rendering refuses to run without. */
  nodeGroups?: ClusterApiNodeGroups;
}

/** The Machines and the fleet's MachineDeployments of the Cluster, read on the management side. */
export type MachineLookup = () => Promise<{
  machines: KubeObject[];
  fleetDeployments: ReadonlySet<string>;
}>;

export interface ClusterApiCloudProviderOptions {
  /** The management-cluster namespace of the Cluster (where the fleet writes its groups). */
  namespace: string;
  access: ManagementAccess;
  /** The infrastructure template kinds the fleet may write (one per infrastructure provider). */
  templateKinds: readonly ResourceIdentity[];
  image?: string;
}

/** `cluster:///…` style: any scheme, then what the infrastructure provider puts after it. */
const PROVIDER_ID = /^[a-z][a-z0-9+.-]*:\/\/\S+$/;

/** The Deployment's CreateOnly field: Karpenter scales MachineDeployments once they exist. */
const REPLICAS = ['spec', 'replicas'] as const;

/**
 * Karpenter through karpenter-provider-cluster-api, on a Cluster API workload cluster. Topology
 * STANDALONE: the fleet's sidecar and the operand run on the workload cluster; the Cluster API
 * objects are on the management cluster, which is either the same API server (OpenShift's own
 * Cluster API) or another one (`access`).
 */
export class ClusterApiCloudProvider implements CloudProvider<
  ClusterApiRenderInfrastructure,
  MachineLookup
> {
  readonly name = 'capi';
  readonly topology = 'STANDALONE';
  readonly nodeClass = CLUSTER_API_NODE_CLASS;
  readonly defaultNodeClassName = DEFAULT_CLUSTER_API_NODE_CLASS_NAME;
  readonly operandNamespace = CAPI_OPERAND_NAMESPACE;
  readonly operandTarget = 'workload';
  /** Karpenter core's label: the Cluster API provider puts no NodeClass label of its own. */
  readonly nodeClassLabel = 'karpenter.sh/nodepool';
  readonly defaultRelease: string = DEFAULT_KARPENTER_VERSION;
  private readonly image: string;

  constructor(private readonly options: ClusterApiCloudProviderOptions) {
    this.image = options.image ?? DEFAULT_CLUSTER_API_KARPENTER_IMAGE;
  }

  customResourceDefinitions(
    release: string = this.defaultRelease,
  ): readonly CustomResourceDefinitionSource[] {
    const parsed = KarpenterVersion.safeParse(release);
    if (!parsed.success)
      throw new Error(`Karpenter ${release}: ${parsed.error.issues[0]?.message}`);
    const directory = karpenterCrdDirectory(parsed.data);
    const upstream = (
      identity: ResourceIdentity,
      path: string,
    ): CustomResourceDefinitionSource => ({
      identity,
      target: 'workload',
      origin: 'upstream',
      path,
    });
    return [
      upstream(NODEPOOL, `${directory}/karpenter.sh_nodepools.yaml`),
      upstream(NODECLAIM, `${directory}/karpenter.sh_nodeclaims.yaml`),
      // The provider's CRD is not part of Karpenter's releases: one version for all of them.
      upstream(
        CLUSTER_API_NODE_CLASS,
        'karpenter/karpenter.cluster.x-k8s.io_clusterapinodeclasses.yaml',
      ),
    ];
  }

  renderOperand(
    infra: ClusterApiRenderInfrastructure,
    desired: KarpenterDesiredState,
  ): TargetedObject[] {
    const groups = infra.nodeGroups;
    if (!groups)
      throw new Error('Cluster API: instance type capacities were not looked up before rendering');
    return [
      ...renderClusterApiOperand(infra, desired, {
        image: desired.operand?.image ?? this.image,
        access: this.options.access,
      }),
      ...renderKarpenterNodeGroups({
        infra,
        capacities: groups.capacities,
        templateKind: groups.templateKind,
        templateSpecFor: (type) => {
          const spec = groups.templateSpecs[type];
          if (!spec) throw new Error(`Cluster API: no infrastructure template spec for ${type}`);
          return spec;
        },
      }).map(({ target, object }) => ({ target, object: canonical(object) })),
    ];
  }

  renderDefaultNodeClass(
    infra: ClusterApiRenderInfrastructure,
    overrides: NodeClassOverrides,
  ): TargetedObject {
    this.validateNodeClassOverrides(overrides);
    return renderDefaultClusterApiNodeClass(infra);
  }

  /** See validateClusterApiNodeClassOverrides (registration.ts, shared with the fleet API). */
  validateNodeClassOverrides(overrides: NodeClassOverrides): void {
    validateClusterApiNodeClassOverrides(overrides);
  }

  /** The default keeps selecting exactly the fleet's MachineDeployments; others are the SRE's. */
  enforceNodeClass(live: KubeObject, infra: ClusterApiRenderInfrastructure): NodeClassEnforcement {
    const patch: KubeObject = {
      apiVersion: CLUSTER_API_NODE_CLASS.apiVersion,
      kind: CLUSTER_API_NODE_CLASS.kind,
      metadata: { name: live.metadata.name },
    };
    if (live.metadata.name !== this.defaultNodeClassName) return { patch, drifted: [] };
    const want = renderDefaultClusterApiNodeClass(infra).object.spec as Record<string, unknown>;
    const have = (live.spec ?? {}) as Record<string, unknown>;
    const drifted =
      JSON.stringify(canonical(have.scalableResourceSelector ?? null)) ===
      JSON.stringify(canonical(want.scalableResourceSelector))
        ? []
        : ['spec.scalableResourceSelector'];
    return { patch: { ...patch, spec: want }, drifted };
  }

  /** Nodes get their configuration from the bootstrap provider: nothing per NodeClass. */
  renderNodeClassConfig(): TargetedObject[] {
    return [];
  }

  nodeClassConfigKinds(): readonly NodeClassConfigKind[] {
    return [];
  }

  renderNodePools(desired: KarpenterDesiredState): TargetedObject[] {
    const ref = {
      group: CLUSTER_API_NODE_CLASS.group,
      kind: CLUSTER_API_NODE_CLASS.kind,
      name: DEFAULT_CLUSTER_API_NODE_CLASS_NAME,
    };
    return renderNodePools(desired.nodePools, ref).map((object) => ({
      target: 'workload',
      object,
    }));
  }

  createOnlyFields(object: KubeObject): readonly (readonly string[])[] {
    return object.kind === MACHINE_DEPLOYMENT.kind &&
      object.apiVersion === MACHINE_DEPLOYMENT.apiVersion
      ? [REPLICAS]
      : [];
  }

  ownedKinds(): readonly OwnedKind[] {
    const namespace = this.options.namespace;
    const workload = (kind: ResourceIdentity, namespaces?: string[]): OwnedKind => ({
      ...kind,
      target: 'workload',
      ...(namespaces ? { namespaces } : {}),
    });
    const management = (kind: ResourceIdentity, namespaces?: string[]): OwnedKind => ({
      ...kind,
      target: 'management',
      ...(namespaces ? { namespaces } : {}),
    });
    const separate = this.options.access === 'separate-cluster';
    return [
      workload(NAMESPACE),
      workload(SERVICE_ACCOUNT, [CAPI_OPERAND_NAMESPACE]),
      workload(SECRET, [CAPI_OPERAND_NAMESPACE]),
      workload(CLUSTER_ROLE),
      workload(CLUSTER_ROLE_BINDING),
      workload(ROLE, [NODE_LEASE_NAMESPACE, CAPI_OPERAND_NAMESPACE]),
      workload(ROLE_BINDING, [NODE_LEASE_NAMESPACE, CAPI_OPERAND_NAMESPACE]),
      ...(separate
        ? [
            management(SERVICE_ACCOUNT, [namespace]),
            management(CLUSTER_ROLE),
            management(CLUSTER_ROLE_BINDING),
          ]
        : []),
      workload(DEPLOYMENT, [CAPI_OPERAND_NAMESPACE]),
      // Templates before the MachineDeployments that point at them; pruned after them.
      ...this.options.templateKinds.map((kind) => management(kind, [namespace])),
      management(MACHINE_DEPLOYMENT, [namespace]),
      workload(CLUSTER_API_NODE_CLASS),
      workload(NODEPOOL),
    ];
  }

  relatedObjects(): RelatedObject[] {
    return [
      { group: '', resource: 'namespaces', name: CAPI_OPERAND_NAMESPACE },
      {
        group: 'apps',
        resource: 'deployments',
        namespace: CAPI_OPERAND_NAMESPACE,
        name: CAPI_OPERAND_NAME,
      },
      {
        group: '',
        resource: 'serviceaccounts',
        namespace: CAPI_OPERAND_NAMESPACE,
        name: CAPI_SERVICE_ACCOUNT_NAME,
      },
      { group: CLUSTER_ROLE.group, resource: 'clusterroles', name: WORKLOAD_CLUSTER_ROLE },
      { group: NODEPOOL.group, resource: NODEPOOL.plural, name: '' },
      { group: NODECLAIM.group, resource: NODECLAIM.plural, name: '' },
      { group: CLUSTER_API_NODE_CLASS.group, resource: CLUSTER_API_NODE_CLASS.plural, name: '' },
    ];
  }

  renderClusterOperator(input: OperatorStatusInput): TargetedObject {
    return {
      target: 'workload',
      object: renderClusterOperator(input, CAPI_OPERAND_NAME, this.relatedObjects()),
    };
  }

  parseProviderID(providerID: string): string | undefined {
    return PROVIDER_ID.test(providerID) ? providerID : undefined;
  }

  async verifyNodeIdentity(
    claims: readonly NodeIdentityClaim[],
    lookup: MachineLookup,
  ): Promise<NodeIdentityVerdict[]> {
    const invalid = (c: NodeIdentityClaim): NodeIdentityVerdict => ({
      ...c,
      verified: false,
      reason: 'InvalidProviderID',
      message: `providerID ${JSON.stringify(c.providerID)} is not a <provider>://<id> URI`,
    });
    const valid = claims.filter((c) => this.parseProviderID(c.providerID) !== undefined);
    if (valid.length === 0) return claims.map(invalid);
    let found: Awaited<ReturnType<MachineLookup>>;
    try {
      found = await lookup();
    } catch (err) {
      return claims.map((c) =>
        this.parseProviderID(c.providerID) === undefined
          ? invalid(c)
          : {
              ...c,
              verified: false,
              reason: 'CloudLookupFailed',
              message: `listing Machines: ${err instanceof Error ? err.message : String(err)}`,
            },
      );
    }
    const verdicts = verifyMachineNodeIdentity(valid, found.machines, found.fleetDeployments);
    return claims.map((c) =>
      this.parseProviderID(c.providerID) === undefined ? invalid(c) : verdicts[valid.indexOf(c)]!,
    );
  }
}
