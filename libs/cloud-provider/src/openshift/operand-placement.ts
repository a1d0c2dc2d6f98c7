import type { V1PodSpec } from '@kubernetes/client-node';

/**
 * Where Karpenter's operand pods run on a standalone OpenShift cluster, whatever the cloud: on
 * the control plane (never on a node Karpenter could consolidate away; control-plane nodes are
 * never Karpenter's), at system-node-critical priority, its replicas on different nodes when
 * there are enough of them.
 */
export function controlPlanePlacement(
  operandSelector: Record<string, string>,
): Pick<V1PodSpec, 'priorityClassName' | 'nodeSelector' | 'tolerations' | 'affinity'> {
  return {
    priorityClassName: 'system-node-critical',
    nodeSelector: { 'node-role.kubernetes.io/master': '' },
    tolerations: [
      { key: 'node-role.kubernetes.io/master', operator: 'Exists', effect: 'NoSchedule' },
      { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' },
      { key: 'CriticalAddonsOnly', operator: 'Exists' },
    ],
    affinity: {
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          {
            weight: 100,
            podAffinityTerm: {
              topologyKey: 'kubernetes.io/hostname',
              labelSelector: { matchLabels: { ...operandSelector } },
            },
          },
        ],
      },
    },
  };
}
