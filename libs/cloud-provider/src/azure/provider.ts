import {
  CLUSTER_ROLE,
  CLUSTER_ROLE_BINDING,
  CREDENTIALS_REQUEST,
  DEPLOYMENT,
  NAMESPACE,
  NODECLAIM,
  NODEPOOL,
  NODE_OVERLAY,
  POD_DISRUPTION_BUDGET,
  ROLE,
  ROLE_BINDING,
  SERVICE_ACCOUNT,
  VALIDATING_ADMISSION_POLICY,
  VALIDATING_ADMISSION_POLICY_BINDING,
  CONFIG_MAP,
  type KarpenterDesiredState,
  type NodeClassOverrides,
} from '@fleet/contracts';
import type { AzureImageRequirements, AzureStandaloneInfrastructure } from '@fleet/discovery';
import { isRecord } from '../canonical.js';
import { renderClusterOperator } from '../cluster-operator.js';
import { renderNodePools } from '../nodepools.js';
import {
  MACHINE_CONFIG_KINDS,
  renderLaunchableNodeClasses,
  renderNodeClassMachineConfig,
  targetedOnWorkload,
  validateKubeletForMachineConfig,
} from '../openshift/machine-config.js';
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
  TargetedObject,
} from '../types.js';
import { renderAdmissionPolicies } from './admission-policies.js';
import {
  AKS_NODE_CLASS,
  AKS_NODE_CLASS_CRD_FILE,
  AKS_NODE_CLASS_LABEL,
  CLOUD_CREDENTIAL_OPERATOR_NAMESPACE,
  CLUSTER_ROLE_NAME,
  CREDENTIALS_REQUEST_NAME,
  DEFAULT_NODE_CLASS_NAME,
  FORK_CRD_DIRECTORY,
  OPERAND_NAME,
  OPERAND_NAMESPACE,
  SERVICE_ACCOUNT_NAME,
} from './constants.js';
import {
  parseAzureProviderID,
  verifyAzureNodeIdentity,
  type AzureNodeIdentityCluster,
  type AzureVmLookup,
} from './node-identity.js';
import {
  desiredKubelet,
  enforceAKSNodeClass,
  renderDefaultAKSNodeClass,
  validateNodeClassOverrides,
} from './nodeclass.js';
import { renderAzureOperand } from './operand.js';

/** The node identity lookup bound to the cluster's subscription and node resource group. */
export interface AzureInstanceLookup {
  cluster: AzureNodeIdentityCluster;
  getVirtualMachine: AzureVmLookup;
}

const OWNED_KINDS: readonly OwnedKind[] = [
  NAMESPACE,
  { ...SERVICE_ACCOUNT, namespaces: [OPERAND_NAMESPACE] },
  { ...CONFIG_MAP, namespaces: [OPERAND_NAMESPACE] },
  CLUSTER_ROLE,
  CLUSTER_ROLE_BINDING,
  { ...ROLE, namespaces: [NODE_LEASE_NAMESPACE, OPERAND_NAMESPACE] },
  { ...ROLE_BINDING, namespaces: [NODE_LEASE_NAMESPACE, OPERAND_NAMESPACE] },
  { ...CREDENTIALS_REQUEST, namespaces: [CLOUD_CREDENTIAL_OPERATOR_NAMESPACE] },
  { ...DEPLOYMENT, namespaces: [OPERAND_NAMESPACE] },
  { ...POD_DISRUPTION_BUDGET, namespaces: [OPERAND_NAMESPACE] },
  AKS_NODE_CLASS,
  NODEPOOL,
  VALIDATING_ADMISSION_POLICY,
  VALIDATING_ADMISSION_POLICY_BINDING,
].map((kind) => ({ ...kind, target: 'workload' as const }));

const ZONE_LABEL = 'topology.kubernetes.io/zone';
const ARCH_LABEL = 'kubernetes.io/arch';
const INSTANCE_TYPE_LABEL = 'node.kubernetes.io/instance-type';

/**
 * Karpenter on a standalone OpenShift cluster on Azure through the OpenShift fork of
 * karpenter-provider-azure (PROVISION_MODE=openshift), rendered from discovery and the fleet's
 * desired state. `image` is the fork's controller image; without one the driver refuses to
 * render (OperandImageNotSet) rather than guess.
 */
export class AzureStandaloneCloudProvider implements CloudProvider<
  AzureStandaloneInfrastructure,
  AzureInstanceLookup
> {
  readonly name = 'azure';
  readonly topology = 'STANDALONE';
  readonly nodeClass = AKS_NODE_CLASS;
  readonly defaultNodeClassName = DEFAULT_NODE_CLASS_NAME;
  readonly operandNamespace = OPERAND_NAMESPACE;
  readonly nodeClassLabel = AKS_NODE_CLASS_LABEL;

  constructor(private readonly options: { image?: string } = {}) {}

  get image(): string | undefined {
    return this.options.image;
  }

  /**
   * Every CRD the fork's chart ships, as the fork has them: its controller waits (2 min, then
   * exits) for each `karpenter.sh` kind in its scheme, NodeOverlay included, and its NodePool and
   * NodeClaim CRDs reserve the `karpenter.azure.com` label domain (AWS's reserve
   * `karpenter.k8s.aws`). One set whatever release an order names: the fork has one release line.
   */
  customResourceDefinitions(): readonly CustomResourceDefinitionSource[] {
    const upstream = (
      identity: CustomResourceDefinitionSource['identity'],
      path: string,
    ): CustomResourceDefinitionSource => ({
      identity,
      target: 'workload',
      origin: 'upstream',
      path,
    });
    return [
      upstream(NODEPOOL, `${FORK_CRD_DIRECTORY}/karpenter.sh_nodepools.yaml`),
      upstream(NODECLAIM, `${FORK_CRD_DIRECTORY}/karpenter.sh_nodeclaims.yaml`),
      upstream(NODE_OVERLAY, `${FORK_CRD_DIRECTORY}/karpenter.sh_nodeoverlays.yaml`),
      upstream(AKS_NODE_CLASS, `karpenter/${AKS_NODE_CLASS_CRD_FILE}`),
    ];
  }

  renderOperand(
    infra: AzureStandaloneInfrastructure,
    desired: KarpenterDesiredState,
  ): TargetedObject[] {
    const image = this.options.image;
    if (!image)
      throw new Error('no karpenter-provider-azure image configured (AZURE_KARPENTER_IMAGE)');
    return targetedOnWorkload(renderAzureOperand(infra, desired, { image }));
  }

  renderDefaultNodeClass(
    infra: AzureStandaloneInfrastructure,
    overrides: NodeClassOverrides,
  ): TargetedObject {
    return { target: 'workload', object: renderDefaultAKSNodeClass(infra, overrides) };
  }

  validateNodeClassOverrides(overrides: NodeClassOverrides): void {
    validateNodeClassOverrides(overrides);
    validateKubeletForMachineConfig(overrides);
  }

  renderAdmissionPolicies(sidecarUsername: string): TargetedObject[] {
    return targetedOnWorkload(renderAdmissionPolicies(sidecarUsername, OPERAND_NAMESPACE));
  }

  /** Kubelet settings are not the NodeClass's on Azure (desiredKubelet): the desired state has no say here. */
  enforceNodeClass(live: KubeObject, infra: AzureStandaloneInfrastructure): NodeClassEnforcement {
    return enforceAKSNodeClass(live, infra);
  }

  renderNodeClassConfig(
    infra: AzureStandaloneInfrastructure,
    nodeClass: string,
    desired: KarpenterDesiredState,
  ): TargetedObject[] {
    return targetedOnWorkload(
      renderNodeClassMachineConfig({
        nodeClass,
        nodeClassLabel: AKS_NODE_CLASS_LABEL,
        workerUserData: infra.userData,
        kubelet: desiredKubelet(desired.nodeClassOverrides),
        ...(infra.workerKubelet ? { worker: infra.workerKubelet } : {}),
      }),
    );
  }

  nodeClassConfigKinds(): readonly NodeClassConfigKind[] {
    return MACHINE_CONFIG_KINDS;
  }

  renderLaunchableNodeClasses(launchable: string[]): TargetedObject {
    return {
      target: 'workload',
      object: renderLaunchableNodeClasses(OPERAND_NAMESPACE, launchable),
    };
  }

  /**
   * The fleet's NodePools on the default AKSNodeClass; where the workers are zonal, a pool that
   * says nothing of zones gets the worker MachineSets' zones (`<location>-<zone>`), since an
   * AKSNodeClass has no zone of its own. Every pool can only pick sizes that boot the worker
   * image: the fork records the marketplace image with no requirements in OpenShift mode, so the
   * pool carries them: `kubernetes.io/arch` of the image, and the location's sizes of the other
   * Hyper-V generation excluded by `node.kubernetes.io/instance-type NotIn` (the fork's NodePool
   * CRD reserves `karpenter.azure.com/sku-hyperv-generation`, so it cannot be required).
   */
  renderNodePools(
    desired: KarpenterDesiredState,
    infra?: AzureStandaloneInfrastructure,
  ): TargetedObject[] {
    const ref = {
      group: AKS_NODE_CLASS.group,
      kind: AKS_NODE_CLASS.kind,
      name: DEFAULT_NODE_CLASS_NAME,
    };
    const zones = infra?.zones ?? [];
    return renderNodePools(desired.nodePools, ref).map((object) => {
      let pool = zones.length > 0 ? withZones(object, zones) : object;
      if (infra) pool = withImageRequirements(pool, infra.imageRequirements);
      return { target: 'workload', object: pool };
    });
  }

  ownedKinds(): readonly OwnedKind[] {
    return OWNED_KINDS;
  }

  relatedObjects(): RelatedObject[] {
    return [
      { group: '', resource: 'namespaces', name: OPERAND_NAMESPACE },
      { group: 'apps', resource: 'deployments', namespace: OPERAND_NAMESPACE, name: OPERAND_NAME },
      {
        group: '',
        resource: 'serviceaccounts',
        namespace: OPERAND_NAMESPACE,
        name: SERVICE_ACCOUNT_NAME,
      },
      { group: CLUSTER_ROLE.group, resource: 'clusterroles', name: CLUSTER_ROLE_NAME },
      { group: CLUSTER_ROLE.group, resource: 'clusterrolebindings', name: CLUSTER_ROLE_NAME },
      {
        group: CREDENTIALS_REQUEST.group,
        resource: CREDENTIALS_REQUEST.plural,
        namespace: CLOUD_CREDENTIAL_OPERATOR_NAMESPACE,
        name: CREDENTIALS_REQUEST_NAME,
      },
      { group: NODEPOOL.group, resource: NODEPOOL.plural, name: '' },
      { group: NODECLAIM.group, resource: NODECLAIM.plural, name: '' },
      { group: AKS_NODE_CLASS.group, resource: AKS_NODE_CLASS.plural, name: '' },
    ];
  }

  renderClusterOperator(input: OperatorStatusInput): TargetedObject {
    return {
      target: 'workload',
      object: renderClusterOperator(input, OPERAND_NAME, this.relatedObjects()),
    };
  }

  parseProviderID(providerID: string): string | undefined {
    return parseAzureProviderID(providerID) ? providerID : undefined;
  }

  verifyNodeIdentity(
    claims: readonly NodeIdentityClaim[],
    lookup: AzureInstanceLookup,
  ): Promise<NodeIdentityVerdict[]> {
    return verifyAzureNodeIdentity(claims, lookup.cluster, lookup.getVirtualMachine);
  }
}

/**
 * Adds what the image can boot on to a rendered NodePool's requirements, after the pool's own
 * (requirements are ANDed: a pool asking for another architecture gets no nodes, rightly).
 */
function withImageRequirements(pool: KubeObject, image: AzureImageRequirements): KubeObject {
  const copy = structuredClone(pool) as KubeObject & {
    spec: { template: { spec: { requirements?: unknown[] } } };
  };
  const templateSpec = copy.spec.template.spec;
  const requirements = Array.isArray(templateSpec.requirements) ? templateSpec.requirements : [];
  templateSpec.requirements = [
    ...requirements,
    { key: ARCH_LABEL, operator: 'In', values: [image.architecture] },
    ...(image.unbootableVmSizes.length > 0
      ? [
          {
            key: INSTANCE_TYPE_LABEL,
            operator: 'NotIn',
            values: [...image.unbootableVmSizes],
          },
        ]
      : []),
  ];
  return copy;
}

/** Adds the zone requirement to a rendered NodePool that has none of its own. */
function withZones(pool: KubeObject, zones: readonly string[]): KubeObject {
  const copy = structuredClone(pool) as KubeObject & {
    spec: { template: { spec: { requirements?: unknown[] } } };
  };
  const templateSpec = copy.spec.template.spec;
  const requirements = Array.isArray(templateSpec.requirements) ? templateSpec.requirements : [];
  if (requirements.some((r) => isRecord(r) && r.key === ZONE_LABEL)) return pool;
  templateSpec.requirements = [
    ...requirements,
    { key: ZONE_LABEL, operator: 'In', values: [...zones] },
  ];
  return copy;
}
