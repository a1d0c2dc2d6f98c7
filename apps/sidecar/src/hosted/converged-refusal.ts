import type { ConditionSet } from '../reconcile/conditions.js';

/**
 * Why converged mode is refused, from openshift/hypershift 3ee9615567ac: each piece Karpenter
 * needs on a hosted cluster is produced only while HostedCluster.spec.autoNode is set.
 */
export const CONVERGED_MODE_UNSUPPORTED =
  'converged mode (the fleet running Karpenter without spec.autoNode) cannot work on HyperShift: ' +
  'its karpenterignition controller writes Karpenter user data only with spec.autoNode ' +
  '(karpenter-operator/controllers/karpenterignition), the NodePool token gets its Karpenter and AMI labels ' +
  'only with it (hypershift-operator/controllers/nodepool/token.go), the default security group is tagged ' +
  'karpenter.sh/discovery only with it (hostedcontrolplane_controller.go), and without it the HyperShift ' +
  'operator clears HostedControlPlane status.autoNode and deletes set-karpenter-taint on every reconcile ' +
  '(hostedcluster/karpenter.go). Run this sidecar with HOSTED_MODE=AutoNode: HyperShift then runs Karpenter ' +
  '(with its standalone karpenter-operator where the KarpenterOperator feature gate enables it) and the fleet drives it';

/**
 * Converged mode (the sidecar running Karpenter itself, without spec.autoNode) is refused: no
 * HyperShift build produces what it needs without AutoNode, and HyperShift undoes it (see
 * CONVERGED_MODE_UNSUPPORTED). Nothing is written. Sets HostedMode; returns the Degraded reason
 * and message.
 */
export function refuseConverged(conditions: ConditionSet): [reason: string, message: string] {
  conditions.set(
    'HostedMode',
    'False',
    'Converged',
    'asked to run Karpenter itself (HOSTED_MODE=Converged)',
  );
  return ['ConvergedModeUnsupported', CONVERGED_MODE_UNSUPPORTED];
}
