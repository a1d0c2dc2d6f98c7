import { fileURLToPath } from 'node:url';
import {
  CLUSTER_ROLE,
  CLUSTER_ROLE_BINDING,
  CONFIG_MAP,
  CREDENTIALS_REQUEST,
  PROXY,
  DEPLOYMENT,
  KARPENTER_CR,
  NAMESPACE,
  NODECLAIM,
  NODE_OVERLAY,
  CAPACITY_BUFFER,
  NODEPOOL,
  POD_DISRUPTION_BUDGET,
  ROLE,
  ROLE_BINDING,
  SERVICE_ACCOUNT,
  VALIDATING_ADMISSION_POLICY,
  VALIDATING_ADMISSION_POLICY_BINDING,
  DEFAULT_KARPENTER_VERSION,
  KarpenterVersion,
  type KarpenterDesiredState,
  type NodeClassOverrides,
} from '@fleet/contracts';
import { PROXY_NAME, type AwsStandaloneInfrastructure } from '@fleet/discovery';
import { renderClusterOperator } from '../cluster-operator.js';
import { NODE_LEASE_NAMESPACE } from '../rbac.js';
import { renderNodePools } from '../nodepools.js';
import {
  MACHINE_CONFIG_KINDS,
  renderLaunchableNodeClasses,
  renderNodeClassMachineConfig,
  targetedOnWorkload,
  validateKubeletForMachineConfig,
} from '../openshift/machine-config.js';
import type {
  RenderInput,
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
import {
  CLOUD_CREDENTIAL_OPERATOR_NAMESPACE,
  CLUSTER_ROLE_NAME,
  CREDENTIALS_REQUEST_NAME,
  DEFAULT_KARPENTER_IMAGE,
  DEFAULT_NODE_CLASS_NAME,
  karpenterCrdDirectory,
  EC2_NODE_CLASS,
  EC2_NODE_CLASS_LABEL,
  KARPENTER_CR_NAME,
  OPERAND_NAME,
  OPERAND_NAMESPACE,
  SERVICE_ACCOUNT_NAME,
} from './constants.js';
import {
  parseAwsProviderID,
  verifyAwsNodeIdentity,
  type DescribeInstancesLookup,
} from './node-identity.js';
import {
  desiredKubelet,
  enforceEC2NodeClass,
  renderDefaultEC2NodeClass,
  validateNodeClassOverrides,
} from './nodeclass.js';
import { renderAwsOperand } from './operand.js';
import { proposeAwsStandaloneMigration } from './migration.js';
import type { OpenShiftAutoscalerObjects } from '../openshift/migration.js';
import type { MigrationProposal } from '@fleet/contracts';
import { renderAdmissionPolicies } from './admission-policies.js';

/** Directory of the CRDs this project writes for the AWS provider (copy it with the build). */
export const AWS_BUNDLED_CRD_DIRECTORY = fileURLToPath(new URL('./crds/', import.meta.url));

export const KARPENTER_CR_CRD_PATH = `${AWS_BUNDLED_CRD_DIRECTORY}autoscaling.openshift.io_karpenters.yaml`;

export interface AwsCloudProviderOptions {
  /** The Karpenter controller image; defaults to DEFAULT_KARPENTER_IMAGE. */
  image?: string;
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
  KARPENTER_CR,
  { ...DEPLOYMENT, namespaces: [OPERAND_NAMESPACE] },
  { ...POD_DISRUPTION_BUDGET, namespaces: [OPERAND_NAMESPACE] },
  EC2_NODE_CLASS,
  NODEPOOL,
  // Last, so pruning (in reverse) lifts the protection first.
  VALIDATING_ADMISSION_POLICY,
  VALIDATING_ADMISSION_POLICY_BINDING,
].map((kind) => ({ ...kind, target: 'workload' as const }));

/**
 * Karpenter on a standalone OpenShift cluster on AWS: what OpenShift's karpenter-operator
 * deploys, rendered from discovery and the fleet's desired state.
 */
export class AwsStandaloneCloudProvider implements CloudProvider<
  AwsStandaloneInfrastructure,
  DescribeInstancesLookup
> {
  readonly name = 'aws';
  readonly topology = 'STANDALONE';
  readonly nodeClass = EC2_NODE_CLASS;
  readonly defaultNodeClassName = DEFAULT_NODE_CLASS_NAME;
  readonly operandNamespace = OPERAND_NAMESPACE;
  readonly nodeClassLabel = EC2_NODE_CLASS_LABEL;
  readonly defaultRelease: string = DEFAULT_KARPENTER_VERSION;
  private readonly image: string;

  constructor(options: AwsCloudProviderOptions = {}) {
    this.image = options.image ?? DEFAULT_KARPENTER_IMAGE;
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
      file: string,
    ): CustomResourceDefinitionSource => ({
      identity,
      target: 'workload',
      origin: 'upstream',
      path: `${directory}/${file}`,
    });
    return [
      upstream(NODEPOOL, 'karpenter.sh_nodepools.yaml'),
      upstream(NODECLAIM, 'karpenter.sh_nodeclaims.yaml'),
      upstream(EC2_NODE_CLASS, 'karpenter.k8s.aws_ec2nodeclasses.yaml'),
      // The rest of what the release's chart ships; the operand's controllers for them are behind
      // feature gates (NodeOverlay, CapacityBuffer), but a user turning one on finds its CRD. Only
      // the default release's chart list is vendored (libs/crd-schema/upstream/sources).
      ...(directory === karpenterCrdDirectory(this.defaultRelease)
        ? [
            upstream(NODE_OVERLAY, 'karpenter.sh_nodeoverlays.yaml'),
            upstream(CAPACITY_BUFFER, 'autoscaling.x-k8s.io_capacitybuffers.yaml'),
          ]
        : []),
      {
        identity: KARPENTER_CR,
        target: 'workload',
        origin: 'bundled',
        path: KARPENTER_CR_CRD_PATH,
      },
    ];
  }

  renderOperand(
    infra: AwsStandaloneInfrastructure,
    desired: KarpenterDesiredState,
  ): TargetedObject[] {
    return renderAwsOperand(infra, desired, { image: desired.operand?.image ?? this.image }).map(
      (object) => ({
        target: 'workload',
        object,
      }),
    );
  }

  renderDefaultNodeClass(
    infra: AwsStandaloneInfrastructure,
    overrides: NodeClassOverrides,
  ): TargetedObject {
    return { target: 'workload', object: renderDefaultEC2NodeClass(infra, overrides) };
  }

  validateNodeClassOverrides(overrides: NodeClassOverrides): void {
    validateNodeClassOverrides(overrides);
    validateKubeletForMachineConfig(overrides);
  }

  renderAdmissionPolicies(sidecarUsername: string): TargetedObject[] {
    return renderAdmissionPolicies(sidecarUsername, OPERAND_NAMESPACE).map((object) => ({
      target: 'workload',
      object,
    }));
  }

  enforceNodeClass(
    live: KubeObject,
    infra: AwsStandaloneInfrastructure,
    desired: KarpenterDesiredState,
  ): NodeClassEnforcement {
    return enforceEC2NodeClass(live, infra, desired);
  }

  renderNodeClassConfig(
    infra: AwsStandaloneInfrastructure,
    nodeClass: string,
    desired: KarpenterDesiredState,
  ): TargetedObject[] {
    return targetedOnWorkload(
      renderNodeClassMachineConfig({
        nodeClass,
        nodeClassLabel: EC2_NODE_CLASS_LABEL,
        workerUserData: infra.userData,
        kubelet: desiredKubelet(desired.nodeClassOverrides),
        ...(infra.workerKubelet ? { worker: infra.workerKubelet } : {}),
      }),
    );
  }

  nodeClassConfigKinds(): readonly NodeClassConfigKind[] {
    return MACHINE_CONFIG_KINDS;
  }

  /** The launch gate's ConfigMap (admission-policies.ts), in the operand's namespace. */
  renderLaunchableNodeClasses(launchable: string[]): TargetedObject {
    return {
      target: 'workload',
      object: renderLaunchableNodeClasses(OPERAND_NAMESPACE, launchable),
    };
  }

  renderNodePools(desired: KarpenterDesiredState): TargetedObject[] {
    const ref = {
      group: EC2_NODE_CLASS.group,
      kind: EC2_NODE_CLASS.kind,
      name: DEFAULT_NODE_CLASS_NAME,
    };
    return renderNodePools(desired.nodePools, ref).map((object) => ({
      target: 'workload',
      object,
    }));
  }

  ownedKinds(): readonly OwnedKind[] {
    return OWNED_KINDS;
  }

  /** The cluster-wide Proxy: its URLs and trusted CA are in the operand's environment. */
  renderInputs(): readonly RenderInput[] {
    return [{ kind: PROXY, name: PROXY_NAME }];
  }

  proposeMigration(objects: OpenShiftAutoscalerObjects): MigrationProposal {
    return proposeAwsStandaloneMigration(objects);
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
        group: CLUSTER_ROLE.group,
        resource: 'roles',
        namespace: OPERAND_NAMESPACE,
        name: CLUSTER_ROLE_NAME,
      },
      {
        group: CLUSTER_ROLE.group,
        resource: 'rolebindings',
        namespace: OPERAND_NAMESPACE,
        name: CLUSTER_ROLE_NAME,
      },
      {
        group: CREDENTIALS_REQUEST.group,
        resource: CREDENTIALS_REQUEST.plural,
        namespace: CLOUD_CREDENTIAL_OPERATOR_NAMESPACE,
        name: CREDENTIALS_REQUEST_NAME,
      },
      { group: KARPENTER_CR.group, resource: KARPENTER_CR.plural, name: KARPENTER_CR_NAME },
      // An empty name lists every object of the resource (must-gather collects them all).
      { group: NODEPOOL.group, resource: NODEPOOL.plural, name: '' },
      { group: NODECLAIM.group, resource: NODECLAIM.plural, name: '' },
      { group: EC2_NODE_CLASS.group, resource: EC2_NODE_CLASS.plural, name: '' },
    ];
  }

  renderClusterOperator(input: OperatorStatusInput): TargetedObject {
    return {
      target: 'workload',
      object: renderClusterOperator(input, OPERAND_NAME, this.relatedObjects()),
    };
  }

  parseProviderID(providerID: string): string | undefined {
    return parseAwsProviderID(providerID);
  }

  verifyNodeIdentity(
    claims: readonly NodeIdentityClaim[],
    lookup: DescribeInstancesLookup,
  ): Promise<NodeIdentityVerdict[]> {
    return verifyAwsNodeIdentity(claims, lookup);
  }
}
