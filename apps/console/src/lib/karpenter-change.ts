export type CasMode = 'KEEP' | 'DISABLE' | 'MIGRATE';

export interface KarpenterSettings {
  enabled: boolean;
  clusterAutoscalerMode: CasMode;
  /** CAPI clusters only: the instance types the fleet renders MachineDeployments for. */
  allowedInstanceTypes?: readonly string[];
}

/**
 * "m6i.large, c6i.xlarge" (commas or spaces) → ['m6i.large', 'c6i.xlarge']. Only splits: the API
 * checks names, duplicates and the count, and its refusal is shown at the field.
 */
export function parseInstanceTypes(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((t) => t.trim())
    .filter(Boolean);
}

const sameTypes = (a: readonly string[] = [], b: readonly string[] = []) =>
  a.length === b.length && a.every((t, i) => t === b[i]);

export interface ClusterFacts {
  name: string;
  nodePools: number;
  /** What the sidecar last saw of the Cluster Autoscaler, when it has reported. */
  machineAutoscalers: number | null;
  observed: string | null;
}

/**
 * Exactly what the sidecar will do on the cluster for a change of these settings, in the order it
 * does it (see apps/sidecar/src/reconcile/reconciler.ts), so the confirmation promises nothing the
 * cluster will not see. An empty list means the change is a no-op.
 */
export function describeKarpenterChange(
  cluster: ClusterFacts,
  from: KarpenterSettings,
  to: KarpenterSettings,
): string[] {
  const steps: string[] = [];
  const pools = `${cluster.nodePools} NodePool${cluster.nodePools === 1 ? '' : 's'}`;
  if (!from.enabled && to.enabled) {
    steps.push(
      `Installs Karpenter on ${cluster.name}: the openshift-karpenter namespace, its service account, RBAC, cloud credentials request and Deployment, the default EC2NodeClass from the cluster's own infrastructure, and ${cluster.nodePools ? `the ${pools} held for this cluster` : 'no NodePool yet (Karpenter launches no node until one exists)'}.`,
      'Approves the certificate signing requests of the nodes Karpenter launches, after checking each against its NodeClaim and EC2 instance.',
    );
  } else if (from.enabled && !to.enabled) {
    steps.push(
      `Removes Karpenter from ${cluster.name}: first the Cluster Autoscaler comes back if the fleet had removed it (whatever the mode, so the cluster is never without an autoscaler), then the ${pools} (Karpenter drains and terminates the nodes it launched for them), then the EC2NodeClasses, then the operand and everything else the fleet created.`,
    );
  }
  if (from.clusterAutoscalerMode !== to.clusterAutoscalerMode) {
    const scalers =
      cluster.machineAutoscalers === null
        ? 'its MachineAutoscalers'
        : `its ${cluster.machineAutoscalers} MachineAutoscaler${cluster.machineAutoscalers === 1 ? '' : 's'}`;
    switch (to.clusterAutoscalerMode) {
      case 'DISABLE':
        if (!to.enabled) {
          steps.push(
            'Karpenter is off, so the Cluster Autoscaler is kept: the cluster is never left without any autoscaler (ClusterAutoscalerDisabled stays False, reason KeptWithoutKarpenter). It is disabled once Karpenter is enabled and can take over.',
          );
          break;
        }
        steps.push(
          `Disables the Cluster Autoscaler once Karpenter can take over (its operand Available and EC2NodeClass default Ready; until then it keeps running and the ClusterAutoscalerDisabled condition says what Karpenter still lacks): saves an exact copy of ClusterAutoscaler/default and ${scalers} in ConfigMap openshift-config/karpenter-fleet-cluster-autoscaler-backup, then deletes them. MachineSets keep their current replicas.`,
        );
        break;
      case 'KEEP':
        steps.push(
          from.clusterAutoscalerMode === 'DISABLE'
            ? 'Restores the Cluster Autoscaler exactly as it was saved (ClusterAutoscaler/default and the MachineAutoscalers, spec, labels and annotations).'
            : 'Keeps the Cluster Autoscaler running and ends the visible migration (the ClusterAutoscalerMigration condition clears).',
        );
        break;
      case 'MIGRATE':
        steps.push(
          `Runs the Cluster Autoscaler and Karpenter side by side${from.clusterAutoscalerMode === 'DISABLE' ? ' (the saved Cluster Autoscaler is restored first)' : ''}; the ClusterAutoscalerMigration condition says so (BothAutoscalersActive) until you choose KEEP or DISABLE.`,
        );
        break;
    }
  }
  if (!sameTypes(from.allowedInstanceTypes, to.allowedInstanceTypes)) {
    const types = to.allowedInstanceTypes ?? [];
    steps.push(
      `Checks that the cluster's infrastructure offers ${types.length ? (types.length === 1 ? 'that instance type' : 'each of those instance types') : "the worker template's instance type"} (if not, nothing is changed and the cluster reports InstanceTypeNotOffered), then renders the Cluster API MachineDeployments Karpenter scales: one per failure domain for ${types.length ? types.join(', ') : "the worker template's own type"}.`,
    );
  }
  if (steps.length) {
    steps.push(
      'The desired generation goes up by one; the cluster is in sync again when its sidecar reports that generation applied.',
    );
  }
  return steps;
}
