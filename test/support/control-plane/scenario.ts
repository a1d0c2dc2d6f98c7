import { eventually } from '../processes.js';
import type { RealControlPlane } from './control-plane.js';

// What the real-server scenarios (test/real-kubernetes) check the same way on every platform.

export interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

export const conditionOf = (result: { conditions: Condition[] } | undefined, type: string) =>
  result?.conditions.find((c) => c.type === type);

/** What the API server's authorizers refused `user` (403), from its audit log. */
export function refusedRequests(plane: RealControlPlane, user: string): string[] {
  return plane
    .auditedRequests(user)
    .filter((e) => e.stage === 'ResponseComplete' && e.responseStatus?.code === 403)
    .map(
      (e) =>
        `${e.verb} ${e.requestURI}: ${e.responseStatus?.code} ${e.responseStatus?.message ?? ''}`,
    );
}

/** A namespace's Deployments, ReplicaSets, pods and events, for a failure message. */
export async function namespaceState(plane: RealControlPlane, namespace: string): Promise<string> {
  const out: string[] = [];
  for (const path of [
    `/apis/apps/v1/namespaces/${namespace}/deployments`,
    `/apis/apps/v1/namespaces/${namespace}/replicasets`,
    `/api/v1/namespaces/${namespace}/pods`,
    `/api/v1/namespaces/${namespace}/events`,
  ]) {
    out.push(`${path}: ${(await plane.request('GET', path)).body.slice(0, 5000)}`);
  }
  return out.join('\n');
}

/** Waits until the real Deployment controller reports the Deployment Available. */
export async function deploymentAvailable(
  plane: RealControlPlane,
  namespace: string,
  name: string,
  timeoutMs = 60_000,
): Promise<void> {
  await eventually(
    async () => {
      const deployment = await plane.get('apps/v1', 'Deployment', name, namespace);
      const conditions = (deployment?.status as { conditions?: Condition[] } | undefined)
        ?.conditions;
      return conditions?.some((c) => c.type === 'Available' && c.status === 'True')
        ? true
        : undefined;
    },
    { timeoutMs, intervalMs: 250, what: `Deployment ${namespace}/${name} to be Available` },
  ).catch(async (err: Error) => {
    throw new Error(`${err.message}\n${await namespaceState(plane, namespace)}`, { cause: err });
  });
}
