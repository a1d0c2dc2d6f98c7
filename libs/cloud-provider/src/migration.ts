import type { MigrationProposal, NotExpressible, ProposedNodePool } from '@fleet/contracts';
import { DNS1123_LABEL, compareCodeUnits } from '@fleet/contracts';

/**
 * The platform-neutral half of the migration proposal (Cluster Autoscaler → Karpenter). Each
 * platform reads its own objects into `NodeGroup`s (AWS: MachineAutoscaler + MachineSet with
 * the AWS providerSpec, aws/migration.ts; Cluster API: size-annotated MachineDeployments,
 * cluster-api/migration.ts) and this turns them into NodePools with an explanation per choice.
 * Pure: the same groups give the same proposal.
 */

export interface Taint {
  key: string;
  value?: string;
  effect: string;
}

/** What one instance type offers, as the NodePool's `limits` count it. */
export interface GroupCapacity {
  vCpus: number;
  memoryGiB: number;
  gpu?: { resourceName: string; count: number };
}

/** One Cluster Autoscaler node group, as its platform reads it. */
export interface NodeGroup {
  /** `MachineSet`, `MachineDeployment`: how explanations and notExpressible name it. */
  kind: string;
  name: string;
  /** What the NodePool is named after (the group's name without cluster prefix and zone). */
  stem: string;
  instanceType: string;
  /** Absent: the group may place machines in any zone. */
  zone?: string;
  capacityType: 'spot' | 'on-demand';
  /** Why the group's capacity type is what it is, when the platform cannot read its market. */
  capacityTypeWhy?: string;
  minSize: number;
  maxSize: number;
  /** Node labels of the group's template. */
  labels: Record<string, string>;
  taints: Taint[];
  /** Undefined: the instance type is not in the platform's table (limits then skip it). */
  capacity?: GroupCapacity;
  /** Annotations of the group (per-group autoscaler options live there). */
  annotations: Record<string, string>;
}

/** The cluster-wide settings of the Cluster Autoscaler that bear on NodePools. */
export interface AutoscalerSettings {
  /** Where they come from, e.g. `ClusterAutoscaler/default`. */
  object: string;
  coresMax?: number;
  coresMin?: number;
  memoryGiBMax?: number;
  memoryGiBMin?: number;
  maxNodesTotal?: number;
  /** scaleDown.enabled; undefined is enabled (the Cluster Autoscaler's default). */
  scaleDownEnabled?: boolean;
  /** scaleDown.unneededTime, a Go duration such as `5m`. */
  unneededTime?: string;
  /** Settings no NodePool field says, each with its value as the object has it. */
  unsupported: { what: string; reason: string }[];
}

export interface MigrationInput {
  groups: NodeGroup[];
  /** The platform's default NodeClass, which every proposed NodePool uses (the CRD requires one). */
  nodeClassRef: { group: string; kind: string; name: string };
  settings?: AutoscalerSettings;
  /** What the platform already found it cannot carry over (unreadable groups, ...). */
  notExpressible: NotExpressible[];
  explanations: string[];
}

/** The Cluster Autoscaler's own default for scaleDown.unneededTime. */
export const DEFAULT_UNNEEDED_TIME = '10m';
export const MIGRATION_BUDGET = '10%';

/**
 * Label domains Karpenter refuses on a NodePool template (karpenter core, pkg/apis/v1/labels.go:
 * RestrictedLabelDomains, less LabelDomainExceptions): the kubelet may not set them on itself,
 * and Karpenter's webhook and controller reject the NodePool.
 */
const RESTRICTED_LABEL_DOMAINS = ['kubernetes.io', 'k8s.io', 'karpenter.sh'];
const LABEL_DOMAIN_EXCEPTIONS = [
  'kops.k8s.io',
  'node.kubernetes.io',
  'node-restriction.kubernetes.io',
];
/** Labels the cloud and Karpenter set on every node: never carried as template labels. */
const WELL_KNOWN_LABELS = new Set([
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'node.kubernetes.io/instance-type',
  'kubernetes.io/arch',
  'kubernetes.io/os',
  'karpenter.sh/capacity-type',
]);

/** Why Karpenter cannot put this label on its nodes, or undefined when it can. */
export function restrictedLabelReason(key: string): string | undefined {
  const slash = key.indexOf('/');
  const domain = slash < 0 ? '' : key.slice(0, slash);
  if (!domain) return undefined;
  const endsWith = (d: string) => domain === d || domain.endsWith(`.${d}`);
  if (LABEL_DOMAIN_EXCEPTIONS.some(endsWith)) return undefined;
  const restricted = RESTRICTED_LABEL_DOMAINS.find(endsWith);
  return restricted
    ? `Karpenter refuses template labels in the ${restricted} domain (the kubelet may not set them on its own node); schedule on another label, or have an admission webhook or the SRE label the nodes`
    : undefined;
}

/** Per-group autoscaler options (upstream's node-group autoscaling options annotations). */
const PER_GROUP_OPTION = /autoscaling-options-/;

const list = (values: readonly string[]) => values.join(', ');
const sortedUnique = (values: Iterable<string>) => [...new Set(values)].sort();
const labelText = (labels: Record<string, string>) =>
  Object.keys(labels)
    .sort()
    .map((k) => `${k}=${JSON.stringify(labels[k])}`)
    .join(', ');
const taintText = (t: Taint) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`;

/** A NodePool name from a group stem: a DNS-1123 label, at most 63 characters. */
function poolName(stem: string, taken: Set<string>): string {
  let base = stem
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 56)
    .replace(/-+$/, '');
  if (!DNS1123_LABEL.test(base)) base = 'migrated';
  let name = base;
  for (let i = 2; taken.has(name); i++) name = `${base}-${i}`;
  taken.add(name);
  return name;
}

/** `1024Gi`-style quantity from GiB, kept integral. */
const gi = (n: number) => `${Math.ceil(n)}Gi`;

interface Shape {
  key: string;
  labels: Record<string, string>;
  taints: Taint[];
  capacityType: 'spot' | 'on-demand';
  groups: NodeGroup[];
}

/** The proposal from the groups the platform read; NodeClass overrides are the platform's. */
export function proposeNodePools(
  input: MigrationInput,
): Omit<MigrationProposal, 'nodeClassOverrides' | 'nodeClassExplanations'> {
  const notExpressible: NotExpressible[] = [...input.notExpressible];
  const explanations: string[] = [...input.explanations];
  const settings = input.settings;
  for (const u of settings?.unsupported ?? [])
    notExpressible.push({ object: settings!.object, what: u.what, reason: u.reason });

  const shapes = new Map<string, Shape>();
  const groups = [...input.groups].sort((a, b) => compareCodeUnits(a.name, b.name));
  for (const group of groups) {
    const id = `${group.kind}/${group.name}`;
    if (group.maxSize <= 0) {
      explanations.push(
        `${id} is left out: its maximum size is ${group.maxSize}, so the Cluster Autoscaler never adds a node to it`,
      );
      continue;
    }
    if (group.minSize > 0)
      notExpressible.push({
        object: id,
        what: `minimum size ${group.minSize}`,
        reason: `Karpenter keeps no warm nodes: it launches only for pending pods; the ${group.kind} keeps its machines until you scale it down after the migration`,
      });
    for (const key of Object.keys(group.annotations).sort())
      if (PER_GROUP_OPTION.test(key))
        notExpressible.push({
          object: id,
          what: `annotation ${key}=${group.annotations[key]}`,
          reason:
            'per-group autoscaler options (scale-down delays, thresholds) have no NodePool field: one disruption setting applies to the whole NodePool',
        });
    const labels: Record<string, string> = {};
    for (const key of Object.keys(group.labels).sort()) {
      if (WELL_KNOWN_LABELS.has(key)) continue;
      const reason = restrictedLabelReason(key);
      if (reason)
        notExpressible.push({
          object: id,
          what: `label ${key}=${JSON.stringify(group.labels[key])}`,
          reason,
        });
      else labels[key] = group.labels[key]!;
    }
    const taints = [...group.taints].sort((a, b) => compareCodeUnits(taintText(a), taintText(b)));
    const key = JSON.stringify([labels, taints.map(taintText), group.capacityType]);
    const shape = shapes.get(key) ?? {
      key,
      labels,
      taints,
      capacityType: group.capacityType,
      groups: [],
    };
    shape.groups.push(group);
    shapes.set(key, shape);
  }

  const taken = new Set<string>();
  const nodePools: ProposedNodePool[] = [];
  for (const shape of shapes.values())
    nodePools.push(nodePool(shape, settings, taken, input.nodeClassRef));

  if (settings && nodePools.length > 1) {
    const total = (field: 'cpu' | 'nodes', value?: number) =>
      value !== undefined &&
      nodePools.reduce(
        (n, p) => n + Number((p.spec.limits as Record<string, string>)[field] ?? Infinity),
        0,
      ) > value;
    if (total('cpu', settings.coresMax))
      notExpressible.push({
        object: settings.object,
        what: `resourceLimits.cores.max ${settings.coresMax} for the whole cluster`,
        reason:
          'Karpenter limits each NodePool, not the cluster: each proposed NodePool is capped at it, but together they may exceed it',
      });
    if (total('nodes', settings.maxNodesTotal))
      notExpressible.push({
        object: settings.object,
        what: `resourceLimits.maxNodesTotal ${settings.maxNodesTotal} for the whole cluster`,
        reason:
          'Karpenter limits each NodePool, not the cluster: each proposed NodePool is capped at it, but together they may exceed it',
      });
  }
  if (settings?.coresMin !== undefined || settings?.memoryGiBMin !== undefined)
    notExpressible.push({
      object: settings.object,
      what: `resourceLimits minimums (cores ${settings.coresMin ?? 0}, memory ${settings.memoryGiBMin ?? 0}Gi)`,
      reason: 'Karpenter has no lower bound: it never launches a node no pod asked for',
    });
  if (nodePools.length === 0)
    explanations.push('no group can be scaled up by the Cluster Autoscaler: no NodePool proposed');
  return { nodePools, notExpressible, explanations };
}

function nodePool(
  shape: Shape,
  settings: AutoscalerSettings | undefined,
  taken: Set<string>,
  nodeClassRef: MigrationInput['nodeClassRef'],
): ProposedNodePool {
  const groups = shape.groups;
  const names = groups.map((g) => g.name);
  const kinds = sortedUnique(groups.map((g) => g.kind));
  const from = `from ${kinds.join('/')}${groups.length > 1 ? 's' : ''} ${list(names)}`;
  const explanations: string[] = [];
  const types = sortedUnique(groups.map((g) => g.instanceType));
  explanations.push(`instance types ${list(types)} ${from}`);
  const requirements: Record<string, unknown>[] = [
    { key: 'node.kubernetes.io/instance-type', operator: 'In', values: types },
  ];
  const zoned = groups.filter((g) => g.zone);
  if (zoned.length === groups.length) {
    const zones = sortedUnique(zoned.map((g) => g.zone!));
    requirements.push({ key: 'topology.kubernetes.io/zone', operator: 'In', values: zones });
    explanations.push(
      `zones ${list(zones)}: ${list(groups.map((g) => `${g.name} in ${g.zone}`))}${
        types.length > 1 && zones.length > 1
          ? '; Karpenter may pair any of these types with any of these zones'
          : ''
      }`,
    );
  } else {
    explanations.push(
      `no zone requirement: ${list(groups.filter((g) => !g.zone).map((g) => g.name))} may place machines in any zone`,
    );
  }
  requirements.push({
    key: 'karpenter.sh/capacity-type',
    operator: 'In',
    values: [shape.capacityType],
  });
  const capacityWhy = groups.find((g) => g.capacityTypeWhy)?.capacityTypeWhy;
  explanations.push(
    capacityWhy
      ? `capacity type ${shape.capacityType}: ${capacityWhy}`
      : shape.capacityType === 'spot'
        ? `capacity type spot: ${list(names)} ask${groups.length > 1 ? '' : 's'} for spot instances`
        : `capacity type on-demand: ${groups.length > 1 ? 'none of these groups asks' : 'the group does not ask'} for spot instances`,
  );
  if (Object.keys(shape.labels).length > 0)
    explanations.push(`labels ${labelText(shape.labels)} carried over from the node template`);
  if (shape.taints.length > 0)
    explanations.push(
      `taints ${list(shape.taints.map(taintText))} carried over from the node template`,
    );

  // Limits: the groups' maxima at their instance types' capacity, and the cluster's own limits.
  const limits: Record<string, string> = {};
  const nodes = groups.reduce((n, g) => n + g.maxSize, 0);
  const maxima = list(groups.map((g) => `${g.maxSize}`));
  let nodesWhy = `nodes ${nodes}: the sum of the maximum sizes (${maxima})`;
  let nodeLimit = nodes;
  if (settings?.maxNodesTotal !== undefined && settings.maxNodesTotal < nodes) {
    nodeLimit = settings.maxNodesTotal;
    nodesWhy = `nodes ${nodeLimit}: resourceLimits.maxNodesTotal of ${settings.object} is tighter than the sum of the maximum sizes (${nodes})`;
  } else if (settings?.maxNodesTotal !== undefined) {
    nodesWhy += `, tighter than resourceLimits.maxNodesTotal ${settings.maxNodesTotal}`;
  }
  limits.nodes = `${nodeLimit}`;
  const limitsWhy = [nodesWhy];
  const unknown = groups.filter((g) => !g.capacity);
  if (unknown.length > 0) {
    limitsWhy.push(
      `no cpu or memory from the groups: the capacity of ${list(sortedUnique(unknown.map((g) => g.instanceType)))} is not known here`,
    );
  }
  const sum = (f: (g: NodeGroup) => number) => groups.reduce((n, g) => n + g.maxSize * f(g), 0);
  const cpu = unknown.length === 0 ? sum((g) => g.capacity!.vCpus) : undefined;
  const memory = unknown.length === 0 ? sum((g) => g.capacity!.memoryGiB) : undefined;
  const product = (f: (g: NodeGroup) => number, unit: string) =>
    unknown.length === 0
      ? list(groups.map((g) => `${g.maxSize} × ${f(g)}${unit} ${g.instanceType}`))
      : '';
  const bound = (
    field: string,
    fromGroups: number | undefined,
    clusterMax: number | undefined,
    settingName: string,
    render: (n: number) => string,
    detail: string,
  ) => {
    if (fromGroups === undefined && clusterMax === undefined) return;
    if (fromGroups !== undefined && (clusterMax === undefined || fromGroups <= clusterMax)) {
      limits[field] = render(fromGroups);
      limitsWhy.push(
        `${field} ${render(fromGroups)}: ${detail}${
          clusterMax !== undefined
            ? `; tighter than ${settingName} ${render(clusterMax)} of ${settings!.object}`
            : ''
        }`,
      );
    } else {
      limits[field] = render(clusterMax!);
      limitsWhy.push(
        `${field} ${render(clusterMax!)}: ${settingName} of ${settings!.object}${
          fromGroups !== undefined
            ? `, tighter than the groups' maxima (${render(fromGroups)}: ${detail})`
            : ''
        }`,
      );
    }
  };
  bound(
    'cpu',
    cpu,
    settings?.coresMax,
    'resourceLimits.cores.max',
    (n) => `${n}`,
    product((g) => g.capacity!.vCpus, ' vCPU'),
  );
  bound(
    'memory',
    memory,
    settings?.memoryGiBMax,
    'resourceLimits.memory.max',
    gi,
    product((g) => g.capacity!.memoryGiB, 'Gi'),
  );
  const gpuGroups = groups.filter((g) => g.capacity?.gpu);
  for (const resourceName of sortedUnique(gpuGroups.map((g) => g.capacity!.gpu!.resourceName))) {
    const of = gpuGroups.filter((g) => g.capacity!.gpu!.resourceName === resourceName);
    const n = of.reduce((s, g) => s + g.maxSize * g.capacity!.gpu!.count, 0);
    limits[resourceName] = `${n}`;
    limitsWhy.push(
      `${resourceName} ${n}: ${list(of.map((g) => `${g.maxSize} × ${g.capacity!.gpu!.count} ${g.instanceType}`))}`,
    );
  }
  explanations.push(`limits ${limitsWhy.join('; ')}`);

  const disabled = settings?.scaleDownEnabled === false;
  const consolidateAfter = disabled
    ? 'Never'
    : (goDuration(settings?.unneededTime) ?? DEFAULT_UNNEEDED_TIME);
  explanations.push(
    disabled
      ? `disruption: consolidateAfter Never, as ${settings.object} has scale-down disabled; at most ${MIGRATION_BUDGET} of the nodes disrupted at once`
      : `disruption: consolidationPolicy WhenEmpty after ${consolidateAfter} (${
          settings?.unneededTime && goDuration(settings.unneededTime)
            ? `scaleDown.unneededTime of ${settings.object}`
            : "the Cluster Autoscaler's default unneeded time"
        }), removing only empty nodes as the Cluster Autoscaler does not move pods to pack them tighter either; at most ${MIGRATION_BUDGET} of the nodes disrupted at once`,
  );
  explanations.push(
    'expireAfter Never: machines of the groups were never replaced for their age; Karpenter would otherwise replace every node after 720h',
  );
  const stems = sortedUnique(groups.map((g) => g.stem));
  const templateMetadata =
    Object.keys(shape.labels).length > 0 ? { metadata: { labels: shape.labels } } : {};
  return {
    name: poolName(stems[0]!, taken),
    replaces: groups.map((g) => `${g.kind}/${g.name}`),
    spec: {
      template: {
        ...templateMetadata,
        spec: {
          nodeClassRef,
          requirements,
          ...(shape.taints.length > 0
            ? {
                taints: shape.taints.map((t) => ({
                  key: t.key,
                  ...(t.value ? { value: t.value } : {}),
                  effect: t.effect,
                })),
              }
            : {}),
          expireAfter: 'Never',
        },
      },
      limits,
      disruption: {
        consolidationPolicy: 'WhenEmpty',
        consolidateAfter,
        budgets: [{ nodes: MIGRATION_BUDGET }],
      },
    },
    explanations: explanations.slice(0, 16),
  };
}

/** A duration the NodePool CRD takes (`^(([0-9]+(s|m|h))+)|(Never)$`), or undefined. */
function goDuration(value: string | undefined): string | undefined {
  return value !== undefined && /^([0-9]+(s|m|h))+$/.test(value) ? value : undefined;
}
