import { NODEPOOL, type DesiredNodePool } from '@fleet/contracts';
import { canonical, isRecord } from './canonical.js';
import { InvalidDesiredStateError, type FieldCause } from './errors.js';
import { ownedLabels } from './labels.js';
import type { KubeObject } from './types.js';

export interface NodeClassRef {
  group: string;
  kind: string;
  name: string;
}

/**
 * Why a NodePool's nodeClassRef would make Karpenter ignore it, or undefined: Karpenter manages
 * only NodePools whose nodeClassRef group and kind are a NodeClass its provider serves
 * (IsManaged in sigs.k8s.io/karpenter pkg/utils/nodepool), and leaves every other one alone.
 */
export function nodeClassRefProblem(
  nodeClassRef: unknown,
  served: Pick<NodeClassRef, 'group' | 'kind'>,
  hint = '',
): string | undefined {
  if (nodeClassRef === undefined) return undefined;
  const ref = isRecord(nodeClassRef) ? nodeClassRef : {};
  if (ref.group === served.group && ref.kind === served.kind) return undefined;
  return (
    `must reference group ${served.group}, kind ${served.kind} (not ${String(ref.group)}/${String(ref.kind)}): ` +
    `Karpenter manages only NodePools of the NodeClass kind its provider serves and would ignore this one${hint}`
  );
}

/**
 * Renders the fleet's NodePools as karpenter.sh/v1 objects. A NodePool without a nodeClassRef
 * gets the provider's default NodeClass, so SREs can write platform-neutral NodePools; one that
 * names another kind than the default's is refused (nodeClassRefProblem).
 */
export function renderNodePools(
  nodePools: readonly DesiredNodePool[],
  defaultNodeClassRef: NodeClassRef,
  /** Said after a refused nodeClassRef: what to reference on this platform instead. */
  nodeClassRefHint = '',
): KubeObject[] {
  const causes: FieldCause[] = [];
  const seen = new Map<string, number>();
  nodePools.forEach((pool, i) => {
    const first = seen.get(pool.name);
    if (first !== undefined) {
      causes.push({
        field: `nodePools[${i}].name`,
        message: `duplicate NodePool name "${pool.name}" (also nodePools[${first}])`,
      });
    } else {
      seen.set(pool.name, i);
    }
    if (pool.spec.template !== undefined && !isRecord(pool.spec.template)) {
      causes.push({ field: `nodePools[${i}].spec.template`, message: 'must be an object' });
    }
    const templateSpec = isRecord(pool.spec.template) ? pool.spec.template.spec : undefined;
    if (templateSpec !== undefined && !isRecord(templateSpec)) {
      causes.push({ field: `nodePools[${i}].spec.template.spec`, message: 'must be an object' });
    }
    const refProblem = isRecord(templateSpec)
      ? nodeClassRefProblem(templateSpec.nodeClassRef, defaultNodeClassRef, nodeClassRefHint)
      : undefined;
    if (refProblem)
      causes.push({
        field: `nodePools[${i}].spec.template.spec.nodeClassRef`,
        message: refProblem,
      });
  });
  if (causes.length > 0) throw new InvalidDesiredStateError(causes);

  return nodePools.map((pool) => {
    const template = isRecord(pool.spec.template) ? pool.spec.template : {};
    const templateSpec = isRecord(template.spec) ? template.spec : {};
    return canonical({
      apiVersion: NODEPOOL.apiVersion,
      kind: NODEPOOL.kind,
      metadata: { name: pool.name, labels: ownedLabels() },
      spec: {
        ...pool.spec,
        template: {
          ...template,
          spec: { ...templateSpec, nodeClassRef: templateSpec.nodeClassRef ?? defaultNodeClassRef },
        },
      },
    });
  });
}
