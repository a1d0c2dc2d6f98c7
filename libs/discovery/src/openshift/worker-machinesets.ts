import { z } from 'zod';

import { fail, Stop } from '../stop.js';
import type { DiscoveryCondition, DiscoveryFailure } from '../types.js';
import { describeIssues } from '../zod-issues.js';

export const MACHINE_API_NAMESPACE = 'openshift-machine-api';
export const MACHINE_ROLE_LABEL = 'machine.openshift.io/cluster-api-machine-role';
/** The label the Windows Machine Config Operator requires on Windows MachineSets' machines. */
export const OS_ID_LABEL = 'machine.openshift.io/os-id';
/** The user-data Secret the Windows Machine Config Operator keeps for Windows machines. */
export const WINDOWS_USER_DATA_SECRET = 'windows-user-data';
export const DEFAULT_USER_DATA_SECRET = 'worker-user-data';
const StringMap = z.record(z.string(), z.string());

/** Just enough of a MachineSet to decide whether it is the worker set. */
export const MachineSetHeader = z.object({
  metadata: z.object({
    name: z.string().min(1),
    annotations: StringMap.optional(),
    deletionTimestamp: z.string().optional(),
  }),
  spec: z
    .object({
      template: z
        .object({
          metadata: z.object({ labels: StringMap.optional() }).optional(),
          spec: z
            .object({
              metadata: z.object({ labels: StringMap.optional() }).optional(),
              taints: z.array(z.object({ key: z.string() })).optional(),
              providerSpec: z.object({ value: z.unknown() }).optional(),
            })
            .optional(),
        })
        .optional(),
    })
    .optional(),
});
export type MachineSetHeader = z.infer<typeof MachineSetHeader>;

export interface SkippedMachineSet {
  name: string;
  why: string;
}

/**
 * The cloud's part of telling a worker-role MachineSet apart from a general-purpose one: the
 * machine type its providerSpec names when that type carries accelerators (GPUs and the like).
 */
export type AcceleratedMachineType = (providerSpec: unknown) => string | undefined;

const ACCELERATOR_RESOURCE = /(^|\/)(nvidia\.com|amd\.com|habana\.ai)|neuron|gpu/i;

/**
 * Orders the MachineSets whose providerSpec may describe a general-purpose worker: by name, those
 * labelled role `worker` (upstream takes the first). Beyond upstream, sets that are
 * worker-labelled but really Windows, edge, infra or accelerator pools are passed over, since
 * copying them into the default NodeClass would boot every Karpenter node from a Windows image,
 * on a GPU machine or at the edge. `machineSet`/`name` are the first candidate; discovery
 * tries the next when one cannot be used.
 */
export function selectWorkerMachineSet(
  machineSets: unknown[],
  acceleratedMachineType: AcceleratedMachineType,
): {
  machineSet: unknown;
  name: string | undefined;
  candidates: { name: string; machineSet: unknown }[];
  skipped: SkippedMachineSet[];
} {
  const skipped: SkippedMachineSet[] = [];
  const headers: { header: MachineSetHeader; object: unknown }[] = [];
  for (const [index, object] of machineSets.entries()) {
    const parsed = MachineSetHeader.safeParse(object);
    if (parsed.success) headers.push({ header: parsed.data, object });
    else skipped.push({ name: `#${index}`, why: describeIssues(parsed.error, '') });
  }
  headers.sort((a, b) => compare(a.header.metadata.name, b.header.metadata.name));
  const candidates: { name: string; machineSet: unknown }[] = [];
  for (const { header, object } of headers) {
    const why = whyNotWorker(header, acceleratedMachineType);
    if (why === undefined) candidates.push({ name: header.metadata.name, machineSet: object });
    else skipped.push({ name: header.metadata.name, why });
  }
  return {
    machineSet: candidates[0]?.machineSet,
    name: candidates[0]?.name,
    candidates,
    skipped,
  };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function whyNotWorker(
  ms: MachineSetHeader,
  acceleratedMachineType: AcceleratedMachineType,
): string | undefined {
  const role = ms.spec?.template?.metadata?.labels?.[MACHINE_ROLE_LABEL];
  if (role !== 'worker') return role === undefined ? 'no machine role label' : `role ${role}`;
  if (ms.metadata.deletionTimestamp !== undefined) return 'being deleted';
  const osID = ms.spec?.template?.metadata?.labels?.[OS_ID_LABEL];
  if (osID?.toLowerCase() === 'windows') return `Windows nodes (${OS_ID_LABEL}=${osID})`;
  const userDataSecret = (
    ms.spec?.template?.spec?.providerSpec?.value as { userDataSecret?: { name?: unknown } } | null
  )?.userDataSecret?.name;
  if (userDataSecret === WINDOWS_USER_DATA_SECRET)
    return `Windows nodes (user data Secret ${WINDOWS_USER_DATA_SECRET})`;
  const nodeLabels = Object.keys(ms.spec?.template?.spec?.metadata?.labels ?? {});
  const taints = (ms.spec?.template?.spec?.taints ?? []).map((t) => t.key);
  for (const special of ['edge', 'infra'] as const) {
    const key = `node-role.kubernetes.io/${special}`;
    if (nodeLabels.includes(key) || taints.includes(key)) return `${special} nodes (${key})`;
  }
  const gpuAnnotation = ms.metadata.annotations?.['machine.openshift.io/GPU'];
  if (gpuAnnotation !== undefined && Number(gpuAnnotation) > 0) {
    return `GPU nodes (machine.openshift.io/GPU=${gpuAnnotation})`;
  }
  const accelerated = [...nodeLabels, ...taints].find((k) => ACCELERATOR_RESOURCE.test(k));
  if (accelerated !== undefined) return `GPU nodes (${accelerated})`;
  const machineType = acceleratedMachineType(ms.spec?.template?.spec?.providerSpec?.value);
  if (machineType !== undefined) return `GPU nodes (${machineType})`;
  return undefined;
}

/** Stops discovery with `NoWorkerMachineSet`, naming what was passed over, when no set is a candidate. */
export function requireWorkerCandidates(selection: {
  candidates: unknown[];
  skipped: SkippedMachineSet[];
}): void {
  if (selection.candidates.length > 0) return;
  const considered = selection.skipped.map((s) => `${s.name} (${s.why})`).join(', ');
  fail(
    'NoWorkerMachineSet',
    `no MachineSet in ${MACHINE_API_NAMESPACE} is labelled ${MACHINE_ROLE_LABEL}=worker for general-purpose nodes` +
      (considered ? `; passed over: ${considered}` : '; the namespace has no MachineSets'),
  );
}

/**
 * Tries each candidate worker set in turn: one failing with a reason in `setUnusable` is passed
 * over with that reason; any other failure (a lookup that failed) stops discovery, since a
 * passing error must not switch the set the default NodeClass is copied from. No candidate at
 * all is `NoWorkerMachineSet`; none usable is the first candidate's reason, naming the others.
 */
export async function firstUsableWorker<T>(
  selection: {
    candidates: { name: string; machineSet: unknown }[];
    skipped: SkippedMachineSet[];
  },
  setUnusable: ReadonlySet<DiscoveryFailure['reason']>,
  use: (candidate: { name: string; machineSet: unknown }, index: number) => Promise<T>,
): Promise<{ value: T; workerSelection: { chosen: string; passedOver: SkippedMachineSet[] } }> {
  requireWorkerCandidates(selection);
  const unusable: SkippedMachineSet[] = [];
  let firstFailure: DiscoveryFailure | undefined;
  for (const [index, candidate] of selection.candidates.entries()) {
    try {
      const value = await use(candidate, index);
      return {
        value,
        workerSelection: {
          chosen: candidate.name,
          passedOver: [...selection.skipped, ...unusable],
        },
      };
    } catch (err) {
      if (!(err instanceof Stop) || !setUnusable.has(err.failure.reason)) throw err;
      firstFailure ??= err.failure;
      unusable.push({ name: candidate.name, why: `${err.failure.reason}: ${err.failure.message}` });
    }
  }
  const others = unusable.slice(1);
  throw new Stop({
    ok: false,
    reason: firstFailure!.reason,
    message:
      firstFailure!.message +
      (others.length
        ? `; no other worker MachineSet could be used: ${others.map((p) => `${p.name} (${p.why})`).join(', ')}`
        : ''),
  });
}

/** Which worker set the default NodeClass (`nodeClassKind`) is copied from, and why not the others. */
export function workerSelectedCondition(
  nodeClassKind: string,
  { chosen, passedOver }: { chosen: string; passedOver: SkippedMachineSet[] },
): DiscoveryCondition {
  return {
    type: 'WorkerMachineSetSelected',
    status: 'True',
    reason: passedOver.length > 0 ? 'OthersPassedOver' : 'FirstWorkerMachineSet',
    message:
      `the default ${nodeClassKind} is copied from MachineSet ${MACHINE_API_NAMESPACE}/${chosen}` +
      (passedOver.length > 0
        ? `; passed over: ${passedOver.map((p) => `${p.name} (${p.why})`).join('; ')}`
        : ''),
  };
}
