import type { ClusterDetailFragment } from '../graphql/generated.js';

type DriftEntry = NonNullable<ClusterDetailFragment['status']['drift']>[number];

/** `NodePool general`, `PodDisruptionBudget openshift-karpenter/karpenter (management)`. */
export function driftObject(e: Pick<DriftEntry, 'kind' | 'namespace' | 'name' | 'target'>): string {
  const name = e.namespace ? `${e.namespace}/${e.name}` : e.name;
  return `${e.kind} ${name}${e.target === 'workload' ? '' : ` (${e.target} cluster)`}`;
}

/**
 * What was changed and by whom, as the API server's managedFields say: a deleted object has no
 * fields; fields beyond those the sidecar reports are counted.
 */
export function driftFields(e: Pick<DriftEntry, 'change' | 'fields' | 'moreFields'>): string {
  if (e.change === 'Deleted' && e.fields.length === 0) return 'the whole object (deleted)';
  const listed = e.fields.map((f) => (f.manager ? `${f.path} by ${f.manager}` : f.path));
  if (e.moreFields > 0) listed.push(`${e.moreFields} more`);
  return listed.join(', ');
}
