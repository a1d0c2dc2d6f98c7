import {
  NODEPOOL,
  defineKind,
  type Condition,
  type ResourceIdentity,
  type KarpenterDesiredState,
  type NodeClassOverrides,
} from '@fleet/contracts';
import {
  HOSTED_CLUSTER,
  type AutoNodeCounts,
  type HostedAwsInfrastructure,
  type HostedClusterRef,
  type HostedModeObservation,
} from '@fleet/discovery';
import { canonical } from '../canonical.js';
import { InvalidDesiredStateError } from '../errors.js';
import { ownedLabels } from '../labels.js';
import { EC2_NODE_CLASS } from '../aws/constants.js';
import { renderNodePools } from '../nodepools.js';
import type { KubeObject, TargetedObject } from '../types.js';

/**
 * HyperShift's NodeClass in the guest: what users (here, the fleet) write; HyperShift's
 * karpenter-operator derives the EC2NodeClass Karpenter reads from it.
 */
export const OPENSHIFT_EC2_NODE_CLASS = defineKind(
  'karpenter.hypershift.openshift.io',
  'v1',
  'OpenshiftEC2NodeClass',
  'openshiftec2nodeclasses',
  false,
);
/**
 * The OpenshiftEC2NodeClass of HyperShift builds before its promotion to v1 (openshift/hypershift
 * 9ce89af8c1, 2026-04-20: "types unchanged, only the API version bumped"); spec.kubelet came
 * later, in v1 only (264fa5adaf). The karpenter-operator installs one version, never both.
 */
export const OPENSHIFT_EC2_NODE_CLASS_V1BETA1 = defineKind(
  OPENSHIFT_EC2_NODE_CLASS.group,
  'v1beta1',
  OPENSHIFT_EC2_NODE_CLASS.kind,
  OPENSHIFT_EC2_NODE_CLASS.plural,
  false,
);

/**
 * The OpenshiftEC2NodeClass version the guest serves, from its discovery of the group: v1 where
 * served, else v1beta1; undefined until HyperShift has installed the CRD.
 */
export function servedOpenshiftEc2NodeClass(
  servedVersions: readonly string[],
): ResourceIdentity | undefined {
  return [OPENSHIFT_EC2_NODE_CLASS, OPENSHIFT_EC2_NODE_CLASS_V1BETA1].find((k) =>
    servedVersions.includes(k.version),
  );
}

/**
 * HyperShift's karpenter-operator owns the OpenshiftEC2NodeClass `default` (it rewrites its spec),
 * so the fleet keeps its own beside it, with the same selectors plus the SRE's overrides.
 */
export const HOSTED_DEFAULT_NODE_CLASS_NAME = 'karpenter-fleet';

/**
 * How the sidecar runs a hosted cluster. `AutoNode`: HyperShift runs Karpenter (spec.autoNode),
 * the fleet drives it. `Converged` (the sidecar running it itself) is refused.
 */
export type HostedMode = 'AutoNode' | 'Converged';

/**
 * Marks a HostedCluster whose spec.autoNode the fleet set: disabling clears only such an
 * autoNode, so registering a cluster where an SRE enabled AutoNode by hand never turns it off.
 */
export const AUTO_NODE_OWNER_ANNOTATION = 'fleet.karpenter.sh/auto-node';

/** Whether the fleet set this HostedCluster's spec.autoNode (AUTO_NODE_OWNER_ANNOTATION). */
export function autoNodeSetByFleet(hostedCluster: unknown): boolean {
  const metadata = (hostedCluster as { metadata?: { annotations?: Record<string, string> } })
    ?.metadata;
  return metadata?.annotations?.[AUTO_NODE_OWNER_ANNOTATION] === 'true';
}

/**
 * The merge patch of HostedCluster.spec.autoNode: Karpenter on AWS with `roleARN`, or null to
 * clear it (whoever set it: a merge patch takes the field away from every manager, which
 * server-side apply would not), with the fleet's ownership annotation set or removed alike.
 */
export function renderAutoNodePatch(ref: HostedClusterRef, roleARN: string | null): KubeObject {
  return {
    apiVersion: HOSTED_CLUSTER.apiVersion,
    kind: HOSTED_CLUSTER.kind,
    metadata: {
      name: ref.name,
      namespace: ref.namespace,
      annotations: { [AUTO_NODE_OWNER_ANNOTATION]: roleARN === null ? null : 'true' } as Record<
        string,
        string
      >,
    },
    spec: {
      autoNode:
        roleARN === null
          ? null
          : {
              provisionerConfig: {
                name: 'Karpenter',
                karpenter: { platform: 'AWS', aws: { roleARN } },
              },
            },
    },
  };
}

/**
 * The role Karpenter assumes: desired state's webIdentityRoleArn, else the one HyperShift already
 * holds (an SRE who enabled AutoNode by hand keeps theirs). Undefined: nothing to enable with.
 */
export function autoNodeRoleArn(
  desired: Pick<KarpenterDesiredState, 'webIdentityRoleArn'>,
  infra: Pick<HostedAwsInfrastructure, 'autoNode'>,
): string | undefined {
  return desired.webIdentityRoleArn ?? infra.autoNode?.roleARN;
}

/**
 * The fleet's OpenshiftEC2NodeClass: HyperShift's default selectors for the cluster (private
 * subnets and the security group tagged with its infraID) and the SRE's overrides; HyperShift
 * derives AMI, user data and instance profile into the EC2NodeClass.
 */
export function renderHostedDefaultNodeClass(
  infraID: string,
  overrides: NodeClassOverrides,
  nodeClass: ResourceIdentity = OPENSHIFT_EC2_NODE_CLASS,
): KubeObject {
  if (nodeClass.version === OPENSHIFT_EC2_NODE_CLASS_V1BETA1.version && 'kubelet' in overrides)
    // The API server would prune the unknown field and the nodes would silently run without it.
    throw new InvalidDesiredStateError([
      {
        field: 'nodeClassOverrides.kubelet',
        message:
          'this HyperShift build serves OpenshiftEC2NodeClass v1beta1, which has no kubelet field (it came with v1); upgrade HyperShift or remove the kubelet overrides',
      },
    ]);
  return canonical({
    apiVersion: nodeClass.apiVersion,
    kind: nodeClass.kind,
    metadata: { name: HOSTED_DEFAULT_NODE_CLASS_NAME, labels: ownedLabels() },
    spec: {
      subnetSelectorTerms: [
        {
          tags: {
            'kubernetes.io/role/internal-elb': '1',
            [`kubernetes.io/cluster/${infraID}`]: '*',
          },
        },
      ],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': infraID } }],
      ...structuredClone(overrides),
    },
  });
}

/**
 * What a hosted NodePool's nodeClassRef names: the EC2NodeClass Karpenter reads, which
 * HyperShift's karpenter-operator derives from the OpenshiftEC2NodeClass of the same name
 * (docs/content/how-to/aws/create-aws-hosted-cluster-autonode.md and test/e2e/karpenter_test.go
 * at 3ee9615567ac). Karpenter ignores a NodePool that names the OpenshiftEC2NodeClass itself.
 */
export const HOSTED_NODECLASS_REF_HINT =
  '; on hosted clusters name the EC2NodeClass HyperShift derives from the OpenshiftEC2NodeClass of the same name';

export function renderHostedNodePools(desired: KarpenterDesiredState): KubeObject[] {
  return renderNodePools(
    desired.nodePools,
    {
      group: EC2_NODE_CLASS.group,
      kind: EC2_NODE_CLASS.kind,
      name: HOSTED_DEFAULT_NODE_CLASS_NAME,
    },
    HOSTED_NODECLASS_REF_HINT,
  );
}

/** What the sidecar keeps in the guest in AutoNode mode, in apply order; nothing when disabled. */
export function renderGuestObjects(
  infra: Pick<HostedAwsInfrastructure, 'infraID'>,
  desired: KarpenterDesiredState,
  nodeClass: ResourceIdentity = OPENSHIFT_EC2_NODE_CLASS,
): TargetedObject[] {
  if (!desired.enabled) return [];
  return [
    renderHostedDefaultNodeClass(infra.infraID, desired.nodeClassOverrides, nodeClass),
    ...renderHostedNodePools(desired),
  ].map((object) => ({ target: 'workload' as const, object }));
}

/** The guest kinds the sidecar prunes by its label, in apply order (prune in reverse). */
export const guestOwnedKinds = (nodeClass: ResourceIdentity = OPENSHIFT_EC2_NODE_CLASS) => [
  { ...nodeClass, target: 'workload' as const },
  { ...NODEPOOL, target: 'workload' as const },
];
export const GUEST_OWNED_KINDS = guestOwnedKinds();

type Status = Condition['status'];
export interface HostedCondition {
  type: string;
  status: Status;
  reason: string;
  message: string;
}

/**
 * HyperShift's AutoNodeEnabled condition on the HostedCluster, if it has written one. One written
 * for an older generation (metav1.Condition observedGeneration, which reconcileAutoNodeEnabledCondition
 * in hypershift-operator/controllers/hostedcluster/karpenter.go sets to the generation it saw) says
 * nothing yet about the spec.autoNode the fleet just wrote: it is pending until HyperShift catches up.
 */
export function autoNodeEnabledCondition(hostedCluster: unknown): HostedCondition | undefined {
  const object = hostedCluster as
    { metadata?: { generation?: number }; status?: { conditions?: unknown } } | undefined;
  const status = object?.status;
  const conditions = Array.isArray(status?.conditions) ? (status.conditions as unknown[]) : [];
  const c = conditions.find(
    (x): x is HostedCondition & { observedGeneration?: number } =>
      typeof x === 'object' && x !== null && (x as { type?: unknown }).type === 'AutoNodeEnabled',
  );
  if (!c) return undefined;
  const generation = object?.metadata?.generation;
  if (
    generation !== undefined &&
    c.observedGeneration !== undefined &&
    c.observedGeneration < generation
  )
    return {
      type: 'AutoNodeEnabled',
      status: 'Unknown',
      reason: 'AutoNodeEvaluationPending',
      message: `HyperShift has not evaluated generation ${generation} of the HostedCluster yet (its AutoNodeEnabled is of generation ${c.observedGeneration}: ${c.reason}${c.message ? `, ${c.message}` : ''})`,
    };
  return {
    type: 'AutoNodeEnabled',
    status: c.status,
    reason: c.reason || 'AutoNodeEnabled',
    message: c.message ?? '',
  };
}

export interface AutoNodeView {
  enabled: boolean;
  mode: HostedModeObservation;
  /** HyperShift's AutoNodeEnabled condition, as it wrote it. */
  autoNodeEnabled?: HostedCondition;
  counts: AutoNodeCounts;
}

/**
 * The cluster's status as HyperShift sees it: Available/Progressing/Degraded from the
 * AutoNodeEnabled condition and the operand Deployment, and AutoNodeEnabled itself copied with
 * HyperShift's reason (AsExpected, AutoNodeProgressing, AutoNodeNotConfigured, ...).
 */
export function autoNodeConditions(view: AutoNodeView): HostedCondition[] {
  const { enabled, mode, autoNodeEnabled: hs } = view;
  const out: HostedCondition[] = [];
  const operand = mode.operand;
  const operandText = operand
    ? `HyperShift's karpenter Deployment has ${operand.availableReplicas}/${operand.replicas} available`
    : "HyperShift's karpenter Deployment does not exist";
  out.push(
    hs ??
      (mode.autoNodeConfigured
        ? {
            type: 'AutoNodeEnabled',
            status: 'Unknown',
            reason: 'AutoNodeEvaluationPending',
            message: 'HyperShift has not reported AutoNodeEnabled yet',
          }
        : {
            type: 'AutoNodeEnabled',
            status: 'False',
            reason: 'AutoNodeNotConfigured',
            message: 'spec.autoNode is not set on the HostedCluster',
          }),
  );
  if (enabled) {
    const ready =
      hs?.status === 'True' &&
      operand !== undefined &&
      operand.availableReplicas >= Math.max(1, operand.replicas);
    out.push({
      type: 'OperandReady',
      status: operand && operand.availableReplicas > 0 ? 'True' : 'False',
      reason: operand
        ? operand.availableReplicas > 0
          ? 'AsExpected'
          : 'OperandUnavailable'
        : 'OperandMissing',
      message: operandText,
    });
    out.push({
      type: 'Available',
      status: ready ? 'True' : 'False',
      reason: ready ? 'AsExpected' : (hs?.reason ?? 'AutoNodeProgressing'),
      message: ready
        ? `HyperShift runs Karpenter (AutoNode): ${operandText}`
        : `waiting for HyperShift: ${hs?.message ?? 'AutoNodeEnabled not reported yet'}; ${operandText}`,
    });
    out.push({
      type: 'Progressing',
      status: ready ? 'False' : 'True',
      reason: ready ? 'AsExpected' : 'AutoNodeProgressing',
      message: ready ? 'AutoNode is ready' : 'HyperShift is enabling AutoNode',
    });
  } else {
    const gone = !mode.autoNodeConfigured && !mode.hypershiftOperator && operand === undefined;
    out.push({
      type: 'Available',
      status: 'True',
      reason: 'KarpenterDisabled',
      message: gone
        ? 'Karpenter is disabled: spec.autoNode is not set and HyperShift runs no Karpenter'
        : 'Karpenter is disabled: waiting for HyperShift to remove its karpenter Deployments',
    });
    out.push({
      type: 'Progressing',
      status: gone ? 'False' : 'True',
      reason: gone ? 'AsExpected' : 'AutoNodeProgressing',
      message: gone ? 'nothing to do' : 'HyperShift is disabling AutoNode',
    });
  }
  // HyperShift could not tell (Unknown/AutoNodeEvaluationFailed: it failed to list its own
  // components): nothing the fleet reports about AutoNode can be trusted until it can.
  const failed = hs?.status === 'Unknown' && hs.reason === 'AutoNodeEvaluationFailed';
  out.push(
    failed
      ? {
          type: 'Degraded',
          status: 'True',
          reason: 'AutoNodeEvaluationFailed',
          message: `HyperShift cannot evaluate AutoNode: ${hs.message}`,
        }
      : { type: 'Degraded', status: 'False', reason: 'AsExpected', message: 'no problems' },
  );
  return out;
}
