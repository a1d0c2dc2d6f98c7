import {
  CONFIG_MAP,
  KUBELET_CONFIG,
  MACHINE_CONFIG_POOL,
  SECRET,
  type NodeClassOverrides,
  compareCodeUnits,
} from '@fleet/contracts';
import { canonical, isRecord } from '../canonical.js';
import { InvalidDesiredStateError } from '../errors.js';
import { ownedLabels } from '../labels.js';
import type { KubeObject, NodeClassConfigKind, TargetedObject } from '../types.js';

/**
 * How standalone OpenShift configures Karpenter's nodes, the way it configures every node: one
 * MachineConfigPool per NodeClass (`karpenter-<nodeclass>`), whose Machine Config Server
 * endpoint the NodeClass's Ignition pointer names, and a KubeletConfig for the pool. Platform
 * neutral: every standalone OpenShift provider (AWS now, Azure and Cluster API later) renders
 * these with its own NodeClass label.
 */

/** Where OpenShift keeps the user-data Secrets machines boot from (worker-user-data lives here). */
export const USER_DATA_NAMESPACE = 'openshift-machine-api';
/** Which NodeClass a per-NodeClass object belongs to, so it is pruned with it. */
export const NODECLASS_LABEL = 'fleet.karpenter.sh/nodeclass';
/** The MachineConfig label that says which pool(s) a MachineConfig is for. */
export const MACHINE_CONFIG_ROLE_LABEL = 'machineconfiguration.openshift.io/role';
/** OpenShift's custom-pool label, which KubeletConfigs and ContainerRuntimeConfigs select. */
export const POOL_LABEL_PREFIX = 'pools.operator.machineconfiguration.openshift.io/';
const POOL_PREFIX = 'karpenter-';
/** A label name part is at most 63 characters, and the pool name is one. */
const MAX_POOL_NAME = 63;

/** Why a NodeClass cannot get its pool; CamelCase, reported as a Degraded reason. */
export type NodeClassConfigReason =
  | 'IgnitionPointerInvalid'
  | 'NodeClassNameTooLong'
  | 'KubeletConfigFailure'
  | 'MachineConfigPoolOverlap';

export class NodeClassConfigError extends Error {
  override readonly name = 'NodeClassConfigError';
  constructor(
    readonly reason: NodeClassConfigReason,
    readonly nodeClass: string,
    message: string,
  ) {
    super(`NodeClass ${nodeClass}: ${message}`);
  }
}

/**
 * The launch gate's list: a ConfigMap whose keys are the NodeClasses whose pool and Ignition
 * pointer are in place (value: the pool). A ValidatingAdmissionPolicy takes it as params and
 * refuses a NodeClaim of any other NodeClass, so Karpenter cannot launch from a NodeClass before
 * its pool exists, nor from one that cannot get a pool.
 */
export const LAUNCHABLE_NODECLASSES = 'karpenter-fleet-launchable-nodeclasses';

/**
 * The gate's ConfigMap. Without `launchable` it carries no data: the apply phase writes it that
 * way (so it is owned, and pruned with Karpenter) and the NodeClass controller, under its own
 * field manager, owns the keys.
 */
export function renderLaunchableNodeClasses(namespace: string, launchable?: string[]): KubeObject {
  return canonical({
    apiVersion: CONFIG_MAP.apiVersion,
    kind: CONFIG_MAP.kind,
    metadata: { name: LAUNCHABLE_NODECLASSES, namespace, labels: ownedLabels() },
    ...(launchable
      ? {
          data: Object.fromEntries(
            [...launchable].sort().map((name) => [name, machineConfigPoolName(name)]),
          ),
        }
      : {}),
  });
}

export const machineConfigPoolName = (nodeClass: string): string => `${POOL_PREFIX}${nodeClass}`;
export const userDataSecretName = (nodeClass: string): string =>
  `${POOL_PREFIX}${nodeClass}-user-data`;
export const poolLabel = (pool: string): string => `${POOL_LABEL_PREFIX}${pool}`;

function checkedPoolName(nodeClass: string): string {
  const pool = machineConfigPoolName(nodeClass);
  if (pool.length > MAX_POOL_NAME) {
    throw new NodeClassConfigError(
      'NodeClassNameTooLong',
      nodeClass,
      `its MachineConfigPool name "${pool}" is longer than ${MAX_POOL_NAME} characters (it is a label name and a role label value); use a NodeClass name of at most ${MAX_POOL_NAME - POOL_PREFIX.length} characters`,
    );
  }
  return pool;
}

interface IgnitionPointer {
  ignition?: { config?: { merge?: { source?: unknown }[] } };
}

/**
 * The worker's Ignition pointer config with its Machine Config Server URL moved to
 * `/config/<pool>`: same scheme, host, port and CA bundle, everything else kept as it was.
 */
export function poolIgnitionPointer(workerUserData: string, nodeClass: string): string {
  const pool = checkedPoolName(nodeClass);
  const invalid = (why: string) =>
    new NodeClassConfigError(
      'IgnitionPointerInvalid',
      nodeClass,
      `cannot derive the Ignition pointer for MachineConfigPool ${pool} from the worker user data: ${why}`,
    );
  let config: IgnitionPointer;
  try {
    config = JSON.parse(workerUserData) as IgnitionPointer;
  } catch {
    throw invalid('it is not JSON (an Ignition pointer config is)');
  }
  const merge = isRecord(config) ? (config as IgnitionPointer).ignition?.config?.merge : undefined;
  if (!Array.isArray(merge) || merge.length !== 1) {
    throw invalid('ignition.config.merge must hold exactly one source, the Machine Config Server');
  }
  const source = merge[0]?.source;
  let url: URL;
  try {
    url = new URL(String(source));
  } catch {
    throw invalid(`ignition.config.merge[0].source ${JSON.stringify(source)} is not a URL`);
  }
  if (
    url.protocol !== 'https:' ||
    !/^\/config\/[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(url.pathname)
  ) {
    throw invalid(
      `ignition.config.merge[0].source ${url.href} is not a Machine Config Server URL (https://<host>:<port>/config/<pool>)`,
    );
  }
  url.pathname = `/config/${pool}`;
  const derived = structuredClone(config) as {
    ignition: { config: { merge: { source: string }[] } };
  };
  derived.ignition.config.merge[0] = { ...derived.ignition.config.merge[0], source: url.href };
  return JSON.stringify(derived);
}

const MCO_REFUSES =
  'the Machine Config Operator refuses a KubeletConfig that sets it (pkg/controller/kubelet-config/helpers.go validateUserKubeletConfig), so no Karpenter pool could get it';
const present = (v: unknown) =>
  v !== undefined &&
  v !== null &&
  v !== '' &&
  !(Array.isArray(v) && v.length === 0) &&
  !(isRecord(v) && Object.keys(v).length === 0);

/**
 * What the MCO refuses in a KubeletConfig, field by field, as it judges it: set means non-empty
 * (an empty list or map is no setting), except failSwapOn, refused whenever present, and
 * staticPodPath, allowed only empty on a worker's child pool.
 */
const KUBELET_CONFIG_REFUSED: {
  field: string;
  refused: (kubelet: Record<string, unknown>) => boolean;
  why: string;
}[] = [
  {
    field: 'cgroupDriver',
    refused: (k) => present(k.cgroupDriver),
    why: 'the cgroup driver is set by OpenShift (systemd on RHCOS)',
  },
  {
    field: 'clusterDNS',
    refused: (k) => present(k.clusterDNS),
    why: 'the cluster DNS address is set by OpenShift',
  },
  {
    field: 'clusterDomain',
    refused: (k) => present(k.clusterDomain),
    why: 'the cluster domain is set by OpenShift',
  },
  {
    field: 'featureGates',
    refused: (k) => present(k.featureGates),
    why: "the kubelet's feature gates follow the cluster's FeatureGate",
  },
  {
    field: 'failSwapOn',
    refused: (k) => k.failSwapOn !== undefined && k.failSwapOn !== null,
    why: 'swap is managed by OpenShift',
  },
  {
    field: 'memorySwap.swapBehavior',
    refused: (k) => isRecord(k.memorySwap) && present(k.memorySwap.swapBehavior),
    why: 'swap is managed by OpenShift',
  },
  {
    field: 'staticPodPath',
    refused: (k) => present(k.staticPodPath),
    why: "a worker's child pool may only set it empty",
  },
  {
    field: 'systemReservedCgroup',
    refused: (k) =>
      present(k.systemReservedCgroup) &&
      present(k.systemCgroups) &&
      k.systemReservedCgroup !== k.systemCgroups,
    why: 'it must match systemCgroups',
  },
];

/**
 * Desired kubelet settings that a KubeletConfig cannot carry, as causes naming each field.
 * Called by the API (with the NodeClass CRD's own check) and before an order renders anything,
 * so such an order applies nothing.
 */
export function validateKubeletForMachineConfig(overrides: NodeClassOverrides): void {
  const kubelet = overrides.kubelet ?? {};
  const causes = KUBELET_CONFIG_REFUSED.filter((rule) => rule.refused(kubelet)).map((rule) => ({
    field: `nodeClassOverrides.kubelet.${rule.field}`,
    message: `${rule.why}: ${MCO_REFUSES}`,
  }));
  if (causes.length > 0) throw new InvalidDesiredStateError(causes);
}

/**
 * The taint Karpenter expects every node it launched to register with (karpenter.sh/v1
 * `UnregisteredNoExecuteTaint`): Karpenter core's registration (nodeclaim/lifecycle/registration.go)
 * removes it once the NodePool's labels and taints are on the Node, so no pod lands before them.
 * Without it Karpenter logs an error, emits `UnregisteredTaintMissing` and registers the node
 * anyway. HyperShift renders the same one (hosted/kubelet-config.ts, KARPENTER_BASE_TAINTS).
 */
export const UNREGISTERED_TAINT = {
  key: 'karpenter.sh/unregistered',
  value: 'true',
  effect: 'NoExecute',
} as const;

interface Taint {
  key?: unknown;
  value?: unknown;
  effect?: unknown;
}

/** Desired settings with the registration taint last; taints they list already are kept once. */
function withRegistrationTaint(kubelet: Record<string, unknown>): Record<string, unknown> {
  const desired = Array.isArray(kubelet.registerWithTaints)
    ? (kubelet.registerWithTaints as Taint[])
    : [];
  const others = desired.filter(
    (t) => !(t.key === UNREGISTERED_TAINT.key && t.effect === UNREGISTERED_TAINT.effect),
  );
  return {
    ...structuredClone(kubelet),
    registerWithTaints: [...structuredClone(others), { ...UNREGISTERED_TAINT }],
  };
}

export interface NodeClassMachineConfigInput {
  nodeClass: string;
  /** The label Karpenter puts on every Node it launched from a NodeClass, naming it. */
  nodeClassLabel: string;
  /** The worker's Ignition pointer config (the worker user-data Secret's userData). */
  workerUserData: string;
  /** Desired kubelet settings (the KubeletConfig carries the registration taint either way). */
  kubelet: Record<string, unknown> | undefined;
  /** The worker pool's own kubelet settings, which a custom pool would otherwise lose. */
  worker?: WorkerKubeletSettings;
}

/**
 * What the cluster's worker nodes run beyond the worker templates: the KubeletConfigs the MCO
 * accepted for the worker pool, merged in its order, and the cluster's worker latency profile
 * (nodes.config.openshift.io `cluster`). Read by discovery (libs/discovery openshift/worker-kubelet.ts).
 */
export interface WorkerKubeletSettings {
  kubeletConfig: Record<string, unknown>;
  autoSizingReserved?: boolean;
  logLevel?: number;
  workerLatencyProfile?: string;
  /** The KubeletConfigs these come from, for logs and reports. */
  from: string[];
}

/**
 * nodeStatusUpdateFrequency per worker latency profile, as the MCO writes it into the worker's
 * kubelet.conf (kubelet-config/helpers.go updateOriginalKubeConfigwithNodeConfig; openshift/api
 * config/v1 Default/Medium/LowNodeStatusUpdateFrequency).
 */
const LATENCY_PROFILE_FREQUENCY: Record<string, string> = {
  Default: '10s',
  MediumUpdateAverageReaction: '20s',
  LowUpdateSlowReaction: '1m0s',
};

/**
 * The pool's KubeletConfig spec: the worker's settings first (latency profile, then the worker's
 * KubeletConfigs over it, as the MCO builds the worker's kubelet.conf), desired settings over
 * those, the registration taint last. The MCO renders a custom pool's kubelet.conf from the
 * worker templates alone and merges it after the worker's, so whatever the pool's KubeletConfig
 * does not say, its nodes lose.
 */
function poolKubeletConfigSpec(
  desired: Record<string, unknown>,
  worker: WorkerKubeletSettings | undefined,
): { kubeletConfig: Record<string, unknown>; autoSizingReserved?: boolean; logLevel?: number } {
  const frequency = worker?.workerLatencyProfile
    ? LATENCY_PROFILE_FREQUENCY[worker.workerLatencyProfile]
    : undefined;
  const merged = {
    ...(frequency ? { nodeStatusUpdateFrequency: frequency } : {}),
    ...structuredClone(worker?.kubeletConfig ?? {}),
    ...structuredClone(desired),
  };
  // The MCO refuses systemReserved with autoSizingReserved; a reservation in desired state is
  // the one Karpenter computes capacity with, so it wins over the workers' automatic sizing.
  const autoSizing =
    worker?.autoSizingReserved !== undefined && desired.systemReserved === undefined
      ? { autoSizingReserved: worker.autoSizingReserved }
      : {};
  return {
    kubeletConfig: withRegistrationTaint(merged),
    ...autoSizing,
    ...(worker?.logLevel !== undefined ? { logLevel: worker.logLevel } : {}),
  };
}

/**
 * The pool's objects in apply order: the user-data Secret holding the pool's Ignition pointer,
 * the MachineConfigPool, and its KubeletConfig (the registration taint and desired settings). All carry the
 * fleet's label and the NodeClass's, so they are pruned with the NodeClass and nothing else.
 */
export function renderNodeClassMachineConfig(input: NodeClassMachineConfigInput): KubeObject[] {
  const { nodeClass, nodeClassLabel, kubelet } = input;
  const pool = checkedPoolName(nodeClass);
  const pointer = poolIgnitionPointer(input.workerUserData, nodeClass);
  const labels = ownedLabels({ [NODECLASS_LABEL]: nodeClass });
  const objects: KubeObject[] = [
    {
      apiVersion: SECRET.apiVersion,
      kind: SECRET.kind,
      metadata: { name: userDataSecretName(nodeClass), namespace: USER_DATA_NAMESPACE, labels },
      type: 'Opaque',
      data: {
        disableTemplating: Buffer.from('true').toString('base64'),
        userData: Buffer.from(pointer).toString('base64'),
      },
    },
    {
      apiVersion: MACHINE_CONFIG_POOL.apiVersion,
      kind: MACHINE_CONFIG_POOL.kind,
      metadata: { name: pool, labels: { ...labels, [poolLabel(pool)]: '' } },
      spec: {
        // The OpenShift custom-pool convention: every worker MachineConfig, plus those for this pool.
        machineConfigSelector: {
          matchExpressions: [
            { key: MACHINE_CONFIG_ROLE_LABEL, operator: 'In', values: ['worker', pool] },
          ],
        },
        // Only what Karpenter launched from this NodeClass; a MachineSet node never has the label.
        nodeSelector: { matchLabels: { [nodeClassLabel]: nodeClass } },
      },
    },
  ];
  // Always a KubeletConfig: the registration taint is needed whether or not settings are desired.
  objects.push({
    apiVersion: KUBELET_CONFIG.apiVersion,
    kind: KUBELET_CONFIG.kind,
    metadata: { name: pool, labels },
    spec: {
      machineConfigPoolSelector: { matchLabels: { [poolLabel(pool)]: '' } },
      // EC2NodeClass.spec.kubelet and KubeletConfiguration share their field names.
      ...poolKubeletConfigSpec(kubelet ?? {}, input.worker),
    },
  });
  return objects.map((o) => canonical(o));
}

/** Why Karpenter may not launch from a NodeClass yet, though its pool is applied. */
export type MachineConfigReadiness =
  | { ready: true }
  | {
      ready: false;
      reason: 'MachineConfigPoolNotRendered' | 'KubeletConfigNotRendered' | 'KubeletConfigFailure';
      message: string;
    };

interface KubeletConfigCondition {
  type?: string;
  status?: string;
  message?: string;
}

/**
 * Whether a NodeClass's pool can configure a node now, from the pool and KubeletConfig as the MCO
 * reports them. The Machine Config Server answers 500 for a pool with no rendered configuration
 * (status.configuration), so an instance launched before boots nothing; and until the rendered
 * configuration holds the pool's generated kubelet MachineConfig (99-<pool>-generated-kubelet, or
 * -N for a later KubeletConfig) its nodes would register without the registration taint. A
 * KubeletConfig whose last condition is a failure (KubeletConfigAccepted False, or the legacy
 * Failure) keeps it closed, whatever was rendered before: its settings are not what the nodes
 * would get.
 */
export function machineConfigReadiness(
  nodeClass: string,
  pool: KubeObject | undefined,
  kubeletConfig: KubeObject | undefined,
): MachineConfigReadiness {
  const name = machineConfigPoolName(nodeClass);
  const conditions =
    (kubeletConfig?.status as { conditions?: KubeletConfigCondition[] } | undefined)?.conditions ??
    [];
  const last = conditions[conditions.length - 1];
  const failed =
    last !== undefined &&
    (last.type === 'Failure' || (last.type === 'KubeletConfigAccepted' && last.status === 'False'));
  if (failed) {
    const accepted = [...conditions].reverse().find((c) => c.type === 'KubeletConfigAccepted');
    return {
      ready: false,
      reason: 'KubeletConfigFailure',
      message: `the Machine Config Operator refuses KubeletConfig ${name} of NodeClass ${nodeClass}: ${accepted?.message ?? last.message ?? 'no message'}`,
    };
  }
  const configuration = (
    pool?.status as { configuration?: { name?: string; source?: { name?: string }[] } } | undefined
  )?.configuration;
  if (!configuration?.name) {
    return {
      ready: false,
      reason: 'MachineConfigPoolNotRendered',
      message: `MachineConfigPool ${name} of NodeClass ${nodeClass} has no rendered configuration yet; the Machine Config Server cannot serve it`,
    };
  }
  const generated = new RegExp(`^99-${name}-generated-kubelet(-\\d+)?$`);
  if (!(configuration.source ?? []).some((s) => generated.test(s.name ?? ''))) {
    return {
      ready: false,
      reason: 'KubeletConfigNotRendered',
      message: `MachineConfigPool ${name} of NodeClass ${nodeClass} is rendered (${configuration.name}) without its KubeletConfig yet; its nodes would register without the karpenter.sh/unregistered taint`,
    };
  }
  return { ready: true };
}

/** Kinds renderNodeClassMachineConfig writes, in apply order, for pruning a NodeClass's pool. */
export const MACHINE_CONFIG_KINDS: readonly NodeClassConfigKind[] = [
  { ...SECRET, target: 'workload', namespaces: [USER_DATA_NAMESPACE], nameFor: userDataSecretName },
  { ...MACHINE_CONFIG_POOL, target: 'workload' },
  { ...KUBELET_CONFIG, target: 'workload' },
];

export const targetedOnWorkload = (objects: KubeObject[]): TargetedObject[] =>
  objects.map((object) => ({ target: 'workload', object }));

/**
 * A JSON merge patch (RFC 7386) turning `live` into `desired`: keys only in `live` become null,
 * maps recurse. Server-side apply cannot take away fields another manager set; this can.
 */
export function mergePatchTo(live: unknown, desired: unknown): unknown {
  if (!isRecord(live) || !isRecord(desired)) return desired === undefined ? null : desired;
  const patch: Record<string, unknown> = {};
  for (const key of Object.keys(live)) if (!(key in desired)) patch[key] = null;
  for (const [key, value] of Object.entries(desired)) {
    if (JSON.stringify(canonical(live[key])) === JSON.stringify(canonical(value))) continue;
    patch[key] = mergePatchTo(live[key], value);
  }
  return patch;
}

/** A NodePool whose nodes another MachineConfigPool than its Karpenter pool would claim. */
export interface CustomPoolOverlap {
  nodePool: string;
  nodeClass: string;
  /** The cluster's pool that would claim the nodes too. */
  pool: string;
  message: string;
}

interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key?: string; operator?: string; values?: string[] }[];
}

/**
 * Whether a selector surely matches nodes that carry at least `labels`: a requirement on a label
 * the NodePool does not fix (a zone, an instance type) is taken as not matching, so only certain
 * overlaps are named. An empty selector matches nothing, as in the MCO.
 */
function surelySelects(
  selector: LabelSelector | undefined,
  labels: Record<string, string>,
): boolean {
  const matchLabels = Object.entries(selector?.matchLabels ?? {});
  const expressions = selector?.matchExpressions ?? [];
  if (matchLabels.length + expressions.length === 0) return false;
  return (
    matchLabels.every(([k, v]) => labels[k] === v) &&
    expressions.every((e) => {
      const key = e.key ?? '';
      const has = key in labels;
      if (e.operator === 'In') return has && (e.values ?? []).includes(labels[key]!);
      // NotIn and DoesNotExist also match labels the NodePool does not fix: not sure, no overlap.
      if (e.operator === 'NotIn') return has && !(e.values ?? []).includes(labels[key]!);
      return e.operator === 'Exists' && has;
    })
  );
}

/**
 * The labels every node of a NodePool is sure to carry: its template's, those of its
 * single-valued `In` requirements (Karpenter labels its nodes with them), its name and NodeClass,
 * and what an RHCOS worker's kubelet registers with (node-role.kubernetes.io/worker,
 * node.openshift.io/os_id=rhcos, kubernetes.io/os=linux).
 */
function nodePoolNodeLabels(nodePool: KubeObject, nodeClassLabel: string): Record<string, string> {
  const template = (
    nodePool as {
      spec?: {
        template?: {
          metadata?: { labels?: Record<string, string> };
          spec?: {
            nodeClassRef?: { name?: string };
            requirements?: { key?: string; operator?: string; values?: string[] }[];
          };
        };
      };
    }
  ).spec?.template;
  const fromRequirements = Object.fromEntries(
    (template?.spec?.requirements ?? [])
      .filter((r) => r.operator === 'In' && r.values?.length === 1 && r.key)
      .map((r) => [r.key!, r.values![0]!]),
  );
  return {
    'node-role.kubernetes.io/worker': '',
    'node.openshift.io/os_id': 'rhcos',
    'kubernetes.io/os': 'linux',
    ...fromRequirements,
    ...(template?.metadata?.labels ?? {}),
    'karpenter.sh/nodepool': nodePool.metadata.name,
    [nodeClassLabel]: template?.spec?.nodeClassRef?.name ?? '',
  };
}

/**
 * NodePools whose nodes a MachineConfigPool of the cluster's own would claim besides their
 * Karpenter pool. The MCO puts a node matched by two custom pools in neither ("node … belongs to
 * 2 custom roles, cannot proceed with this Node", pkg/helpers/helpers.go GetPoolsForNode): it
 * gets no configuration update ever. One matched by the master pool goes to master, taking the
 * control plane's configuration. The worker pool matches every Karpenter node and is no overlap.
 */
export function customPoolOverlaps(
  nodePools: readonly KubeObject[],
  pools: readonly KubeObject[],
  nodeClassLabel: string,
): CustomPoolOverlap[] {
  const foreign = pools.filter(
    (p) => p.metadata.name !== 'worker' && !p.metadata.labels?.[NODECLASS_LABEL],
  );
  const out: CustomPoolOverlap[] = [];
  for (const nodePool of nodePools) {
    const labels = nodePoolNodeLabels(nodePool, nodeClassLabel);
    const nodeClass = labels[nodeClassLabel] ?? '';
    if (!nodeClass) continue;
    const own = machineConfigPoolName(nodeClass);
    for (const pool of foreign) {
      const selector = (pool as { spec?: { nodeSelector?: LabelSelector } }).spec?.nodeSelector;
      if (!surelySelects(selector, labels)) continue;
      const name = pool.metadata.name;
      out.push({
        nodePool: nodePool.metadata.name,
        nodeClass,
        pool: name,
        message:
          name === 'master'
            ? `NodePool ${nodePool.metadata.name}'s nodes match the master pool's nodeSelector: the Machine Config Operator puts them in the master pool, not ${own}, and they would take the control plane's configuration`
            : `NodePool ${nodePool.metadata.name}'s nodes match MachineConfigPool ${name}'s nodeSelector as well as ${own}'s: the Machine Config Operator refuses a node that belongs to 2 custom roles and leaves it unmanaged; change the NodePool's labels or the pool's nodeSelector`,
      });
    }
  }
  return out.sort(
    (a, b) => compareCodeUnits(a.nodePool, b.nodePool) || compareCodeUnits(a.pool, b.pool),
  );
}
