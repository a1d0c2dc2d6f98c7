import { CLUSTER_OPERATOR } from '@fleet/contracts';
import { canonical, kubeTime } from './canonical.js';
import { ownedLabels } from './labels.js';
import type { KubeObject, OperatorCondition, OperatorStatusInput, RelatedObject } from './types.js';

export const CLUSTER_OPERATOR_NAME = 'karpenter';

type Headline = {
  type: 'Available' | 'Progressing' | 'Degraded';
  reason: string;
  message: string;
};

/** The situation table of karpenter-operator, first matching row wins. */
function headline(
  { karpenter, operand, refusal }: OperatorStatusInput,
  operandName: string,
): Headline {
  if (refusal) return { type: 'Degraded', reason: refusal.reason, message: refusal.message };
  switch (karpenter.state) {
    case 'missing':
      return {
        type: 'Available',
        reason: 'KarpenterNotFound',
        message:
          karpenter.message ??
          'Karpenter CR "default" not found; Karpenter is not configured on this cluster',
      };
    case 'error':
      return {
        type: 'Degraded',
        reason: 'KarpenterCheckFailed',
        message: `Failed to read Karpenter CR "default": ${karpenter.message}`,
      };
    case 'present':
      break;
  }
  switch (operand.state) {
    case 'missing':
      return {
        type: 'Progressing',
        reason: 'OperandNotYetCreated',
        message: `Deployment ${operandName} has not been created yet`,
      };
    case 'error':
      return {
        type: 'Degraded',
        reason: 'OperandCheckFailed',
        message: `Failed to read Deployment ${operandName}: ${operand.message}`,
      };
    case 'present':
      break;
  }
  if (operand.availableReplicas < 1) {
    return {
      type: 'Progressing',
      reason: 'OperandNotReady',
      message: `Deployment ${operandName} has no available replicas (0 of ${operand.replicas})`,
    };
  }
  if (operand.updatedReplicas !== operand.replicas) {
    return {
      type: 'Progressing',
      reason: 'OperandRollingOut',
      message: `Deployment ${operandName} is rolling out: ${operand.updatedReplicas} of ${operand.replicas} replicas updated`,
    };
  }
  return {
    type: 'Available',
    reason: 'AsExpected',
    message: `Deployment ${operandName} is available: ${operand.availableReplicas} of ${operand.replicas} replicas`,
  };
}

/**
 * ClusterOperator conditions from what the sidecar observed, DOMAIN.md's table. Available is True
 * in every row: on OpenShift Available=False means "this component is down" and pages on-call,
 * while a rollout or a failed read is not an outage (karpenter-operator's
 * progressingConditions/degradedConditions keep Available True as well). The row's reason sits
 * on the condition its row sets True (Progressing or Degraded, else Available); the others carry
 * AsExpected. Upgradeable is always True: Karpenter is DevPreviewNoUpgrade, the feature set
 * already blocks upgrades, so this operator adds no block of its own.
 */
export function clusterOperatorConditions(
  input: OperatorStatusInput,
  operandName: string,
): OperatorCondition[] {
  const head = headline(input, operandName);
  const now = kubeTime(input.now);
  const previous = new Map((input.previousConditions ?? []).map((c) => [c.type, c]));
  const condition = (
    type: OperatorCondition['type'],
    status: OperatorCondition['status'],
    reason: string,
    message: string,
  ): OperatorCondition => {
    const before = previous.get(type);
    return {
      type,
      status,
      reason,
      message,
      lastTransitionTime: before?.status === status ? before.lastTransitionTime : now,
    };
  };
  const triad = (['Available', 'Progressing', 'Degraded'] as const).map((type) =>
    type === head.type
      ? condition(type, 'True', head.reason, head.message)
      : condition(type, type === 'Available' ? 'True' : 'False', 'AsExpected', ''),
  );
  return [...triad, condition('Upgradeable', 'True', 'AsExpected', '')];
}

/**
 * The table row rendered conditions stand for: Degraded when it is True, else Progressing when
 * True, else Available. Available is True in every row, so "the True condition" alone no longer
 * names the row.
 */
export function clusterOperatorRow(
  conditions: readonly OperatorCondition[],
): OperatorCondition | undefined {
  const byType = (type: string) => conditions.find((c) => c.type === type && c.status === 'True');
  return byType('Degraded') ?? byType('Progressing') ?? byType('Available');
}

/**
 * The ClusterOperator apply object. It carries `spec: {}` (required by the CRD) and the status;
 * the API server ignores status on the main resource and everything else on /status, so the
 * sidecar applies this same object to both (main first, so the object exists).
 */
export function renderClusterOperator(
  input: OperatorStatusInput,
  operandName: string,
  relatedObjects: RelatedObject[],
): KubeObject {
  return canonical({
    apiVersion: CLUSTER_OPERATOR.apiVersion,
    kind: CLUSTER_OPERATOR.kind,
    metadata: { name: CLUSTER_OPERATOR_NAME, labels: ownedLabels() },
    spec: {},
    status: {
      conditions: clusterOperatorConditions(input, operandName),
      versions: [{ name: 'operator', version: input.version }],
      relatedObjects,
    },
  });
}
