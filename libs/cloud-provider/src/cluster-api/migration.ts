import { compareCodeUnits } from '@fleet/contracts';
import type { MigrationProposal, NotExpressible } from '@fleet/contracts';
import { proposeNodePools, type NodeGroup, type Taint } from '../migration.js';
import type { KubeObject } from '../types.js';
import {
  CAPACITY_ANNOTATION,
  CLUSTER_API_NODE_CLASS,
  DEFAULT_CLUSTER_API_NODE_CLASS_NAME,
  KARPENTER_NODE_GROUP_LABEL,
} from './constants.js';

/** The Cluster Autoscaler's Cluster API node-group size annotations. */
const MIN_SIZE = 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size';
const MAX_SIZE = 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size';
const INSTANCE_TYPE = 'node.kubernetes.io/instance-type';
const ZONE = 'topology.kubernetes.io/zone';
const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';
const DEPLOYMENT_NAME_LABEL = 'cluster.x-k8s.io/deployment-name';

type Rec = Record<string, unknown>;
const rec = (v: unknown): Rec =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Rec) : {};

/** `k=v,k2=v2` as the scale-from-zero labels annotation writes it. */
function keyValues(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (text ?? '').split(',')) {
    const eq = part.indexOf('=');
    if (eq > 0) out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}

/** `key=value:Effect,key2:Effect` as the taints annotation writes it. */
function taints(text: string | undefined): Taint[] {
  const out: Taint[] = [];
  for (const part of (text ?? '').split(',').map((p) => p.trim())) {
    const colon = part.lastIndexOf(':');
    if (colon <= 0) continue;
    const [key, value] = part.slice(0, colon).split('=');
    if (key) out.push({ key, effect: part.slice(colon + 1), ...(value ? { value } : {}) });
  }
  return out;
}

/** A Kubernetes quantity of memory in GiB (Mi, Gi, Ki, or bytes). */
function gibibytes(q: string | undefined): number | undefined {
  const m = /^([0-9]+(?:\.[0-9]+)?)(Ki|Mi|Gi|Ti)?$/.exec(q ?? '');
  if (!m) return undefined;
  const scale = { Ki: 1 / 1024 / 1024, Mi: 1 / 1024, Gi: 1, Ti: 1024 }[m[2] ?? ''] ?? 1 / 1024 ** 3;
  return Number(m[1]) * scale;
}

/**
 * Cluster API: the MachineDeployments and MachineSets the Cluster Autoscaler scales (a max-size
 * annotation) as NodePools. Everything is read from the group itself, as the Cluster Autoscaler
 * reads it to scale from zero: the instance type and zone from the capacity labels annotation
 * (the zone also from `failureDomain`), capacity from the cpu/memory/gpu annotations, taints from
 * the taints annotation. A group without an instance type cannot be carried over. Pure.
 */
export function proposeClusterApiMigration(groups: readonly KubeObject[]): MigrationProposal {
  const nodeGroups: NodeGroup[] = [];
  const notExpressible: NotExpressible[] = [];
  const explanations: string[] = [];
  const unsized: string[] = [];
  for (const g of [...groups].sort((a, b) => compareCodeUnits(a.metadata.name, b.metadata.name))) {
    const annotations = g.metadata.annotations ?? {};
    const id = `${g.kind}/${g.metadata.name}`;
    // A MachineDeployment's MachineSet is scaled through the MachineDeployment, never alone;
    // the groups the fleet renders for Karpenter are Karpenter's already.
    if (g.kind === 'MachineSet' && g.metadata.labels?.[DEPLOYMENT_NAME_LABEL]) continue;
    if (g.metadata.labels?.[KARPENTER_NODE_GROUP_LABEL] !== undefined) continue;
    if (annotations[MAX_SIZE] === undefined) {
      unsized.push(id);
      continue;
    }
    const labels = keyValues(annotations[CAPACITY_ANNOTATION.labels]);
    const instanceType = labels[INSTANCE_TYPE];
    if (!instanceType) {
      notExpressible.push({
        object: id,
        what: `annotation ${CAPACITY_ANNOTATION.labels}`,
        reason: `it names no ${INSTANCE_TYPE}, so no NodePool requirement can select the group's machines`,
      });
      continue;
    }
    const failureDomain = rec(rec(rec(g.spec).template).spec).failureDomain;
    const zone = labels[ZONE] ?? (typeof failureDomain === 'string' ? failureDomain : undefined);
    const vCpus = Number(annotations[CAPACITY_ANNOTATION.cpu]);
    const memoryGiB = gibibytes(annotations[CAPACITY_ANNOTATION.memory]);
    const gpuCount = Number(annotations[CAPACITY_ANNOTATION.gpuCount] ?? 0);
    const gpuType = annotations[CAPACITY_ANNOTATION.gpuType];
    const clusterName = g.metadata.labels?.[CLUSTER_NAME_LABEL];
    let stem = g.metadata.name;
    if (clusterName && stem.startsWith(`${clusterName}-`))
      stem = stem.slice(clusterName.length + 1);
    if (zone && stem.endsWith(`-${zone}`)) stem = stem.slice(0, -zone.length - 1);
    nodeGroups.push({
      kind: g.kind,
      name: g.metadata.name,
      stem,
      instanceType,
      ...(zone ? { zone } : {}),
      capacityType: 'on-demand',
      capacityTypeWhy:
        "the group's annotations do not say its market (a spot option would be in its infrastructure template, which is not read); check before applying",
      minSize: Number(annotations[MIN_SIZE] ?? 0) || 0,
      maxSize: Number(annotations[MAX_SIZE]) || 0,
      labels,
      taints: taints(annotations[CAPACITY_ANNOTATION.taints]),
      ...(Number.isFinite(vCpus) && vCpus > 0 && memoryGiB !== undefined
        ? {
            capacity: {
              vCpus,
              memoryGiB,
              ...(gpuCount > 0 && gpuType
                ? { gpu: { resourceName: gpuType, count: gpuCount } }
                : {}),
            },
          }
        : {}),
      annotations,
    });
  }
  if (unsized.length > 0)
    explanations.push(
      `${unsized.join(', ')} carr${unsized.length > 1 ? 'y' : 'ies'} no max-size annotation: the Cluster Autoscaler does not scale ${unsized.length > 1 ? 'them' : 'it'}, so no NodePool replaces ${unsized.length > 1 ? 'them' : 'it'}`,
    );
  const proposal = proposeNodePools({
    groups: nodeGroups,
    nodeClassRef: {
      group: CLUSTER_API_NODE_CLASS.group,
      kind: CLUSTER_API_NODE_CLASS.kind,
      name: DEFAULT_CLUSTER_API_NODE_CLASS_NAME,
    },
    notExpressible,
    explanations,
  });
  const types = [
    ...new Set(
      proposal.nodePools.flatMap((p) => {
        const spec = rec(rec(p.spec.template).spec);
        const reqs = Array.isArray(spec.requirements)
          ? (spec.requirements as { key: string; values: string[] }[])
          : [];
        return reqs.find((r) => r.key === INSTANCE_TYPE)?.values ?? [];
      }),
    ),
  ].sort();
  return {
    ...proposal,
    explanations: [
      ...proposal.explanations,
      ...(types.length > 0
        ? [
            `the fleet renders a MachineDeployment per instance type and failure domain for Karpenter: allowedInstanceTypes ${types.join(', ')} lets the proposed NodePools launch every type the groups had`,
          ]
        : []),
    ],
    nodeClassOverrides: {},
    nodeClassExplanations: [],
  };
}
