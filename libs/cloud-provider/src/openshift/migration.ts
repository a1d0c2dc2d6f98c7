import { compareCodeUnits } from '@fleet/contracts';
import type { NotExpressible } from '@fleet/contracts';
import type { AutoscalerSettings, NodeGroup, Taint } from '../migration.js';
import type { KubeObject } from '../types.js';

/**
 * OpenShift's Cluster Autoscaler objects, read for the migration proposal: the settings of
 * ClusterAutoscaler/default and, per MachineAutoscaler, the MachineSet it scales with its node
 * template (labels, taints) and sizes. The machine itself (type, zone, market) is in the
 * providerSpec, which each cloud reads in its own folder (`MachineSetMachine`).
 */
export interface OpenShiftAutoscalerObjects {
  clusterAutoscaler?: KubeObject;
  machineAutoscalers: readonly KubeObject[];
  machineSets: readonly KubeObject[];
}

/** What a cloud reads from a MachineSet's providerSpec; a string is why it cannot. */
export type MachineSetMachine =
  Pick<NodeGroup, 'instanceType' | 'zone' | 'capacityType' | 'capacity'> | string;

const MACHINE_SET_KIND = 'MachineSet';
const CLUSTER_LABEL = 'machine.openshift.io/cluster-api-cluster';

type Rec = Record<string, unknown>;
const rec = (v: unknown): Rec =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Rec) : {};
const num = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) ? v : undefined;
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const strings = (v: unknown): Record<string, string> =>
  Object.fromEntries(
    Object.entries(rec(v)).filter((e): e is [string, string] => typeof e[1] === 'string'),
  );

/** Settings of ClusterAutoscaler/default that no NodePool field can say, with why. */
const UNSUPPORTED: { path: string[]; reason: string }[] = [
  {
    path: ['scaleDown', 'delayAfterAdd'],
    reason:
      'Karpenter has no pause after a scale-up; consolidateAfter counts from the last pod change on the node',
  },
  {
    path: ['scaleDown', 'delayAfterDelete'],
    reason:
      'Karpenter has no pause after a deletion; disruption budgets bound how many nodes go at once instead',
  },
  {
    path: ['scaleDown', 'delayAfterFailure'],
    reason: 'Karpenter retries on its own schedule',
  },
  {
    path: ['scaleDown', 'utilizationThreshold'],
    reason:
      'WhenEmpty removes only empty nodes; Karpenter has no utilization threshold (WhenEmptyOrUnderutilized packs by cost instead)',
  },
  {
    path: ['podPriorityThreshold'],
    reason: 'Karpenter launches nodes for every pending pod whatever its priority',
  },
  {
    path: ['resourceLimits', 'gpus'],
    reason:
      'GPU limits by GPU type; NodePool limits count a resource (nvidia.com/gpu) per NodePool, set from the groups instead',
  },
  {
    path: ['balanceSimilarNodeGroups'],
    reason:
      'Karpenter picks instance types and zones per launch; it spreads by pod topology constraints, not by group sizes',
  },
  {
    path: ['expanders'],
    reason:
      'Karpenter chooses the cheapest fitting instance; NodePool weights order NodePools, not expanders',
  },
  {
    path: ['maxNodeProvisionTime'],
    reason:
      "Karpenter's own registration timeout applies (NodeClaims not registered in 15 minutes are replaced)",
  },
];

export function openShiftAutoscalerSettings(ca: KubeObject): AutoscalerSettings {
  const spec = rec(ca.spec);
  const limits = rec(spec.resourceLimits);
  const scaleDown = rec(spec.scaleDown);
  const object = `${ca.kind}/${ca.metadata.name}`;
  const unsupported: AutoscalerSettings['unsupported'] = [];
  for (const { path, reason } of UNSUPPORTED) {
    let value: unknown = spec;
    for (const p of path) value = rec(value)[p];
    if (value === undefined || value === null) continue;
    unsupported.push({ what: `${path.join('.')} ${JSON.stringify(value)}`, reason });
  }
  const coresMax = num(rec(limits.cores).max);
  const coresMin = num(rec(limits.cores).min);
  const memoryGiBMax = num(rec(limits.memory).max);
  const memoryGiBMin = num(rec(limits.memory).min);
  const maxNodesTotal = num(limits.maxNodesTotal);
  const unneededTime = str(scaleDown.unneededTime);
  const enabled = scaleDown.enabled;
  return {
    object,
    ...(coresMax !== undefined ? { coresMax } : {}),
    ...(coresMin ? { coresMin } : {}),
    ...(memoryGiBMax !== undefined ? { memoryGiBMax } : {}),
    ...(memoryGiBMin ? { memoryGiBMin } : {}),
    ...(maxNodesTotal !== undefined ? { maxNodesTotal } : {}),
    ...(typeof enabled === 'boolean' ? { scaleDownEnabled: enabled } : {}),
    ...(unneededTime ? { unneededTime } : {}),
    unsupported,
  };
}

/** The MachineSet's name without the cluster's infrastructure name and the trailing zone. */
function stem(machineSet: KubeObject, zone: string | undefined): string {
  let name = machineSet.metadata.name;
  const infraID = machineSet.metadata.labels?.[CLUSTER_LABEL];
  if (infraID && name.startsWith(`${infraID}-`)) name = name.slice(infraID.length + 1);
  if (zone && name.endsWith(`-${zone}`)) name = name.slice(0, -zone.length - 1);
  return name || machineSet.metadata.name;
}

/**
 * Each MachineAutoscaler's MachineSet as a node group, the cloud reading its providerSpec.
 * A MachineAutoscaler whose MachineSet is missing or unreadable is named and left out.
 */
export function openShiftNodeGroups(
  objects: OpenShiftAutoscalerObjects,
  machine: (providerSpec: unknown) => MachineSetMachine,
): { groups: NodeGroup[]; notExpressible: NotExpressible[]; explanations: string[] } {
  const groups: NodeGroup[] = [];
  const notExpressible: NotExpressible[] = [];
  const explanations: string[] = [];
  const byName = new Map(objects.machineSets.map((m) => [m.metadata.name, m]));
  const scaled = new Set<string>();
  const autoscalers = [...objects.machineAutoscalers].sort((a, b) =>
    compareCodeUnits(a.metadata.name, b.metadata.name),
  );
  for (const ma of autoscalers) {
    const spec = rec(ma.spec);
    const ref = rec(spec.scaleTargetRef);
    const target = str(ref.name);
    const who = `MachineAutoscaler/${ma.metadata.name}`;
    if (str(ref.kind) !== MACHINE_SET_KIND || !target) {
      notExpressible.push({
        object: who,
        what: `scaleTargetRef ${JSON.stringify(ref)}`,
        reason: 'it does not name a MachineSet, so there is no group to carry over',
      });
      continue;
    }
    const ms = byName.get(target);
    if (!ms) {
      explanations.push(`${who} is left out: its MachineSet ${target} does not exist`);
      continue;
    }
    scaled.add(target);
    const template = rec(rec(ms.spec).template);
    const templateSpec = rec(template.spec);
    const read = machine(rec(templateSpec.providerSpec).value);
    if (typeof read === 'string') {
      notExpressible.push({ object: `MachineSet/${target}`, what: 'providerSpec', reason: read });
      continue;
    }
    const taints: Taint[] = [];
    for (const t of Array.isArray(templateSpec.taints) ? templateSpec.taints : []) {
      const key = str(rec(t).key);
      const effect = str(rec(t).effect);
      const value = str(rec(t).value);
      if (key && effect) taints.push({ key, effect, ...(value ? { value } : {}) });
    }
    groups.push({
      kind: MACHINE_SET_KIND,
      name: target,
      stem: stem(ms, read.zone),
      ...read,
      minSize: num(spec.minReplicas) ?? 0,
      maxSize: num(spec.maxReplicas) ?? 0,
      labels: strings(rec(templateSpec.metadata).labels),
      taints,
      annotations: { ...strings(ms.metadata.annotations), ...strings(ma.metadata.annotations) },
    });
  }
  const unscaled = objects.machineSets
    .map((m) => m.metadata.name)
    .filter((n) => !scaled.has(n))
    .sort();
  if (unscaled.length > 0)
    explanations.push(
      `MachineSet${unscaled.length > 1 ? 's' : ''} ${unscaled.join(', ')} ${unscaled.length > 1 ? 'have' : 'has'} no MachineAutoscaler: the Cluster Autoscaler does not scale ${unscaled.length > 1 ? 'them' : 'it'}, so no NodePool replaces ${unscaled.length > 1 ? 'them' : 'it'}`,
    );
  return { groups, notExpressible, explanations };
}
