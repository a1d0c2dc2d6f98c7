import type { ClusterAutoscalerMode } from '@fleet/contracts';
import { AUTOSCALER_MAX_SIZE, AUTOSCALER_MIN_SIZE } from '@fleet/discovery';
import { MANAGED_BY_LABEL, ownedLabels } from '../labels.js';
import type { KubeObject } from '../types.js';

/** The Cluster Autoscaler's Cluster API node-group bounds, as they appear on a group. */
export const NODE_GROUP_SIZE_ANNOTATIONS = [AUTOSCALER_MIN_SIZE, AUTOSCALER_MAX_SIZE] as const;
/**
 * The exact copy of every size annotation the fleet removed, kept on the management cluster in
 * the Cluster's namespace (a ConfigMap, so it outlives the sidecar and Karpenter's removal).
 */
export const NODE_GROUP_SIZES_BACKUP = 'karpenter-fleet-cluster-autoscaler-node-groups';
const BACKUP_KEY = 'node-group-sizes.json';

/** `MachineDeployment/<name>` → the removed annotations, values exactly as they were. */
export type NodeGroupSizes = Record<string, Record<string, string>>;

export interface NodeGroupSizesPlan {
  /** Merge patches, each for one MachineDeployment or MachineSet. */
  patches: {
    kind: string;
    name: string;
    mergePatch: { metadata: { annotations: Record<string, string | null> } };
  }[];
  /** The ConfigMap to write before any patch; `null` to delete it after the patches. */
  backup: KubeObject | null;
  condition: {
    type: 'ClusterAutoscalerDisabled';
    status: 'True' | 'False';
    reason: string;
    message: string;
  };
}

const key = (o: KubeObject): string => `${o.kind}/${o.metadata.name}`;

export function readNodeGroupSizesBackup(configMap: KubeObject | undefined): NodeGroupSizes {
  const raw = (configMap?.data as Record<string, string> | undefined)?.[BACKUP_KEY];
  return raw ? (JSON.parse(raw) as NodeGroupSizes) : {};
}

function backupConfigMap(
  namespace: string,
  clusterName: string,
  sizes: NodeGroupSizes,
): KubeObject {
  const sorted = Object.fromEntries(Object.entries(sizes).sort(([a], [b]) => (a < b ? -1 : 1)));
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: NODE_GROUP_SIZES_BACKUP,
      namespace,
      labels: ownedLabels({ 'cluster.x-k8s.io/cluster-name': clusterName }),
    },
    data: { [BACKUP_KEY]: JSON.stringify(sorted) },
  };
}

/**
 * The Cluster Autoscaler on Cluster API scales a MachineDeployment or MachineSet whose max-size
 * annotation is above 0. DISABLE removes both size annotations from the SRE's worker groups,
 * first recording their exact values; KEEP puts back exactly what was recorded and drops the
 * record; MIGRATE leaves the Cluster Autoscaler its groups (restoring them if DISABLE had
 * removed them) beside Karpenter. The fleet's own MachineDeployments never carry either
 * annotation, so they are never patched here.
 */
export function planNodeGroupSizes(input: {
  mode: ClusterAutoscalerMode;
  namespace: string;
  clusterName: string;
  /** The cluster's MachineDeployments and MachineSets as they are now. */
  groups: readonly KubeObject[];
  backup: KubeObject | undefined;
}): NodeGroupSizesPlan {
  const recorded = readNodeGroupSizesBackup(input.backup);
  const workers = input.groups.filter((g) => g.metadata.labels?.[MANAGED_BY_LABEL] === undefined);
  if (input.mode === 'DISABLE') {
    const sizes: NodeGroupSizes = { ...recorded };
    const patches: NodeGroupSizesPlan['patches'] = [];
    for (const group of workers) {
      const annotations = group.metadata.annotations ?? {};
      const present = NODE_GROUP_SIZE_ANNOTATIONS.filter((a) => annotations[a] !== undefined);
      if (present.length === 0) continue;
      // Values set again since the last DISABLE are what the SRE wants back now.
      sizes[key(group)] = Object.fromEntries(present.map((a) => [a, annotations[a]!]));
      patches.push({
        kind: group.kind,
        name: group.metadata.name,
        mergePatch: {
          metadata: { annotations: Object.fromEntries(present.map((a) => [a, null])) },
        },
      });
    }
    const count = Object.keys(sizes).length;
    return {
      patches,
      backup: count > 0 ? backupConfigMap(input.namespace, input.clusterName, sizes) : null,
      condition: {
        type: 'ClusterAutoscalerDisabled',
        status: 'True',
        reason: 'NodeGroupSizesRemoved',
        message: `node-group size annotations removed from ${count} worker group(s) in ${input.namespace}; an exact copy is in ConfigMap ${input.namespace}/${NODE_GROUP_SIZES_BACKUP}`,
      },
    };
  }
  const byKey = new Map(workers.map((g) => [key(g), g]));
  const patches: NodeGroupSizesPlan['patches'] = [];
  for (const [groupKey, annotations] of Object.entries(recorded)) {
    const group = byKey.get(groupKey);
    if (!group) continue; // deleted meanwhile: nothing to give back
    patches.push({
      kind: group.kind,
      name: group.metadata.name,
      mergePatch: { metadata: { annotations } },
    });
  }
  return {
    patches,
    backup: null,
    condition: {
      type: 'ClusterAutoscalerDisabled',
      status: 'False',
      reason: input.mode === 'MIGRATE' ? 'RunningBesideKarpenter' : 'Kept',
      message:
        input.mode === 'MIGRATE'
          ? 'the Cluster Autoscaler keeps its worker groups and runs beside Karpenter (MIGRATE)'
          : 'the Cluster Autoscaler keeps its worker groups (KEEP)',
    },
  };
}
