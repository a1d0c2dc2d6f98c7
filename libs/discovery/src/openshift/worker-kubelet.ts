import {
  defineKind,
  KUBELET_CONFIG,
  MACHINE_CONFIG_POOL,
  type ResourceIdentity,
  compareCodeUnits,
} from '@fleet/contracts';
import type { ClusterObjectReader } from '../cluster-reader.js';
import { readCluster } from '../stop.js';

/** nodes.config.openshift.io: cluster-wide node settings, the worker latency profile among them. */
export const CONFIG_NODE: ResourceIdentity = defineKind(
  'config.openshift.io',
  'v1',
  'Node',
  'nodes',
  false,
);

/** The worker pool's kubelet settings (shape: @fleet/cloud-provider WorkerKubeletSettings). */
export interface WorkerKubelet {
  kubeletConfig: Record<string, unknown>;
  autoSizingReserved?: boolean;
  logLevel?: number;
  workerLatencyProfile?: string;
  from: string[];
}

interface Selector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}
interface KubeletConfigObject {
  metadata?: {
    name?: string;
    generation?: number;
    creationTimestamp?: string;
    annotations?: Record<string, string>;
  };
  spec?: {
    machineConfigPoolSelector?: Selector;
    kubeletConfig?: Record<string, unknown>;
    autoSizingReserved?: boolean;
    logLevel?: number;
  };
  status?: { observedGeneration?: number; conditions?: { type?: string; status?: string }[] };
}

const WORKER_POOL_LABELS = { 'pools.operator.machineconfiguration.openshift.io/worker': '' };
const SUFFIX = 'machineconfiguration.openshift.io/mc-name-suffix';
const isMap = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** metav1.LabelSelectorAsSelector as the MCO uses it: an empty selector matches nothing. */
function selects(selector: Selector | undefined, labels: Record<string, string>): boolean {
  const terms = [
    ...Object.entries(selector?.matchLabels ?? {}).map(
      ([key, v]) =>
        () =>
          labels[key] === v,
    ),
    ...(selector?.matchExpressions ?? []).map((e) => () => {
      const has = e.key in labels;
      if (e.operator === 'In') return has && (e.values ?? []).includes(labels[e.key]!);
      if (e.operator === 'NotIn') return !has || !(e.values ?? []).includes(labels[e.key]!);
      if (e.operator === 'Exists') return has;
      return !has;
    }),
  ];
  return terms.length > 0 && terms.every((t) => t());
}

/** mergo.Merge with override, as the MCO merges a KubeletConfig: zero values never override. */
function mergeOverride(
  dst: Record<string, unknown>,
  src: Record<string, unknown>,
): Record<string, unknown> {
  const out = { ...dst };
  for (const [key, value] of Object.entries(src)) {
    if (value === null || value === undefined || value === '' || value === 0 || value === false)
      continue;
    if (Array.isArray(value) && value.length === 0) continue;
    out[key] = isMap(out[key]) && isMap(value) ? mergeOverride(out[key], value) : value;
  }
  return out;
}

/** The MCO's verdict on a KubeletConfig: only one it accepted is on the workers. */
function accepted(kc: KubeletConfigObject): boolean {
  const conditions = kc.status?.conditions ?? [];
  const last = conditions[conditions.length - 1];
  return (
    last !== undefined &&
    ((last.type === 'KubeletConfigAccepted' && last.status === 'True') || last.type === 'Success')
  );
}

/**
 * What the worker nodes run beyond the worker templates: the KubeletConfigs selecting the worker
 * pool that the MCO accepted, in the order their generated MachineConfigs merge
 * (99-worker-generated-kubelet, then -1, -2 …: the mc-name-suffix annotation, else age), and the
 * cluster's worker latency profile. A custom pool renders from the worker templates alone
 * (template/render.go), so a Karpenter pool must carry these itself.
 */
export async function readWorkerKubelet(reader: ClusterObjectReader): Promise<WorkerKubelet> {
  const list = reader.listClusterObjects?.bind(reader);
  const get = reader.getClusterConfig?.bind(reader);
  const pools = list
    ? ((await readCluster('MachineConfigPools', () => list(MACHINE_CONFIG_POOL))) as {
        metadata?: { name?: string; labels?: Record<string, string> };
      }[])
    : [];
  const labels =
    pools.find((p) => p.metadata?.name === 'worker')?.metadata?.labels ?? WORKER_POOL_LABELS;
  const kcs = list
    ? ((await readCluster('KubeletConfigs', () => list(KUBELET_CONFIG))) as KubeletConfigObject[])
    : [];
  const order = (kc: KubeletConfigObject) => Number(kc.metadata?.annotations?.[SUFFIX] || 0);
  const workers = kcs
    .filter((kc) => selects(kc.spec?.machineConfigPoolSelector, labels) && accepted(kc))
    .sort(
      (a, b) =>
        order(a) - order(b) ||
        compareCodeUnits(a.metadata?.creationTimestamp ?? '', b.metadata?.creationTimestamp ?? ''),
    );
  let kubeletConfig: Record<string, unknown> = {};
  let autoSizingReserved: boolean | undefined;
  let logLevel: number | undefined;
  for (const kc of workers) {
    kubeletConfig = mergeOverride(kubeletConfig, kc.spec?.kubeletConfig ?? {});
    if (kc.spec?.autoSizingReserved !== undefined) autoSizingReserved = kc.spec.autoSizingReserved;
    if (kc.spec?.logLevel !== undefined) logLevel = kc.spec.logLevel;
  }
  const node = get
    ? ((await readCluster('Node cluster (config.openshift.io)', () => get(CONFIG_NODE))) as
        { spec?: { workerLatencyProfile?: string } } | undefined)
    : undefined;
  const profile = node?.spec?.workerLatencyProfile;
  return {
    kubeletConfig,
    ...(autoSizingReserved !== undefined ? { autoSizingReserved } : {}),
    ...(logLevel !== undefined ? { logLevel } : {}),
    ...(profile ? { workerLatencyProfile: profile } : {}),
    from: workers.map((kc) => kc.metadata?.name ?? ''),
  };
}

/** `{ workerKubelet }` when the workers have settings of their own, else nothing. */
export function withWorkerKubelet(settings: WorkerKubelet): { workerKubelet?: WorkerKubelet } {
  const empty =
    settings.from.length === 0 &&
    !settings.workerLatencyProfile &&
    Object.keys(settings.kubeletConfig).length === 0;
  return empty ? {} : { workerKubelet: settings };
}
