import { compareCodeUnits } from '@fleet/contracts';
import type { Condition, MachineConfigPoolState } from '@fleet/contracts';
import { NODECLASS_LABEL } from '@fleet/cloud-provider';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { NodeClassProblem } from '../nodeclass/nodeclass-controller.js';

interface PoolObject extends KubernetesObject {
  status?: {
    machineCount?: number;
    updatedMachineCount?: number;
    degradedMachineCount?: number;
    readyMachineCount?: number;
    configuration?: { name?: string };
    conditions?: {
      type?: string;
      status?: string;
      reason?: string;
      message?: string;
      lastTransitionTime?: string;
    }[];
  };
}

/** The pool conditions the fleet keeps; the MCO writes more (RenderDegraded, NodeDegraded…). */
const REPORTED = ['Updated', 'Updating', 'Degraded'] as const;
const STATUSES = new Set(['True', 'False', 'Unknown']);

/**
 * The fleet's view of the NodeClasses' MachineConfigPools, from the watch cache of the pools
 * the sidecar owns. The MCO leaves a condition's reason empty when it has nothing to add; the
 * fleet's conditions are CamelCase throughout, so the type stands in.
 */
export function machineConfigPoolStates(
  pools: readonly KubernetesObject[],
  now: Date,
): MachineConfigPoolState[] {
  return (pools as PoolObject[])
    .filter((p) => p.metadata?.name && p.metadata.labels?.[NODECLASS_LABEL])
    .map((p) => {
      const s = p.status ?? {};
      const machineCount = s.machineCount ?? 0;
      const updated = s.updatedMachineCount ?? 0;
      const degraded = s.degradedMachineCount ?? 0;
      const conditions: Condition[] = [];
      for (const type of REPORTED) {
        const c = s.conditions?.find((x) => x.type === type);
        if (!c || !STATUSES.has(c.status ?? '')) continue;
        const reason = /^[A-Za-z][A-Za-z0-9_]*$/.test(c.reason ?? '') ? c.reason! : type;
        conditions.push({
          type,
          status: c.status as Condition['status'],
          reason,
          message: (c.message ?? '').slice(0, 4096),
          lastTransitionTime: c.lastTransitionTime ?? now.toISOString(),
        });
      }
      return {
        nodeClass: p.metadata!.labels![NODECLASS_LABEL]!,
        name: p.metadata!.name!,
        machineCount,
        updatedMachineCount: updated,
        updatingMachineCount: Math.max(0, machineCount - updated - degraded),
        degradedMachineCount: degraded,
        readyMachineCount: s.readyMachineCount ?? 0,
        ...(s.configuration?.name ? { renderedConfig: s.configuration.name } : {}),
        conditions,
      };
    })
    .sort((a, b) => compareCodeUnits(a.name, b.name));
}

/**
 * The fleet condition `KarpenterPoolsDegraded`: True when a NodeClass cannot get its pool or a
 * pool is Degraded (its nodes do not run the configuration they should), naming which.
 */
export function karpenterPoolsCondition(
  pools: readonly MachineConfigPoolState[],
  problems: readonly NodeClassProblem[],
): { status: 'True' | 'False'; reason: string; message: string } {
  if (problems.length > 0) {
    return {
      status: 'True',
      reason: problems[0]!.reason,
      message: problems.map((p) => p.message).join('; '),
    };
  }
  const degraded = pools.filter((p) =>
    p.conditions.some((c) => c.type === 'Degraded' && c.status === 'True'),
  );
  if (degraded.length > 0) {
    return {
      status: 'True',
      reason: 'MachineConfigPoolDegraded',
      message: degraded
        .map(
          (p) =>
            `MachineConfigPool ${p.name} (NodeClass ${p.nodeClass}) is Degraded: ${
              p.conditions.find((c) => c.type === 'Degraded')?.message || 'no message'
            }`,
        )
        .join('; '),
    };
  }
  return {
    status: 'False',
    reason: 'AsExpected',
    message: `${pools.length} Karpenter MachineConfigPool(s), none degraded`,
  };
}
