import { NODECLAIM } from '@fleet/contracts';
import {
  OWNED_BY_SELECTOR,
  type CloudProvider,
  type ClusterTarget,
  type KubeObject,
  type OwnedKind,
  type TargetedObject,
} from '@fleet/cloud-provider';
import type { KubernetesObject, V1Namespace } from '@kubernetes/client-node';
import { isForbidden, isUnknownKind, type ClusterClient } from '../kube/cluster-client.js';

const keyOf = (o: {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string };
}) => `${o.apiVersion}/${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;

/**
 * The prune phase, and the reads disabling needs: what the fleet owns (its label) of each kind
 * the provider writes, on the API server of that kind's target.
 */
export class OwnedObjects {
  constructor(
    private readonly apiServers: { client(target: ClusterTarget): ClusterClient },
    private readonly provider: Pick<
      CloudProvider<unknown, unknown>,
      'ownedKinds' | 'operandNamespace'
    >,
  ) {}

  private client(target: ClusterTarget): ClusterClient {
    return this.apiServers.client(target);
  }

  async list(kind: OwnedKind): Promise<KubeObject[]> {
    const namespaces = kind.namespaced ? (kind.namespaces ?? []) : [undefined];
    const out: KubeObject[] = [];
    for (const namespace of namespaces) {
      // The sidecar's rights in the operand's namespace live in that namespace (operand-access.ts):
      // before it is created and after it is gone there is nothing to list, and no right to.
      if (
        namespace === this.provider.operandNamespace &&
        !(await this.namespaceLive(kind, namespace))
      )
        continue;
      try {
        const live = await this.client(kind.target).list<KubeObject>(kind.apiVersion, kind.kind, {
          ...(namespace ? { namespace } : {}),
          labelSelector: OWNED_BY_SELECTOR,
        });
        out.push(...live.map((o) => ({ ...o, apiVersion: kind.apiVersion, kind: kind.kind })));
      } catch (err) {
        // A kind whose CRD is not installed (yet) has nothing of ours.
        if (isUnknownKind(err)) continue;
        // Terminating: its RoleBindings (the sidecar's among them) may be gone before it is.
        if (namespace && isForbidden(err) && !(await this.namespaceLive(kind, namespace))) continue;
        throw err;
      }
    }
    return out;
  }

  /** Exists and is not being deleted. */
  private async namespaceLive(kind: OwnedKind, namespace: string): Promise<boolean> {
    const live = await this.client(kind.target).read<V1Namespace>({
      apiVersion: 'v1',
      kind: 'Namespace',
      name: namespace,
    });
    return live !== undefined && !live.metadata?.deletionTimestamp;
  }

  async count(): Promise<number> {
    let n = 0;
    for (const kind of this.provider.ownedKinds()) n += (await this.list(kind)).length;
    return n;
  }

  async nodeClaimNames(): Promise<string[]> {
    try {
      const claims = await this.client('workload').list<KubeObject>(
        NODECLAIM.apiVersion,
        NODECLAIM.kind,
      );
      return claims.map((c) => c.metadata.name).sort();
    } catch (err) {
      if (isUnknownKind(err)) return [];
      throw err;
    }
  }

  /**
   * Deletes every NodeClaim not being deleted yet (Karpenter's finalizer then terminates its
   * node; on Cluster API the provider deletes the Machine). Returns how many it asked to go.
   */
  async deleteRemainingNodeClaims(): Promise<number> {
    let claims: KubernetesObject[];
    try {
      claims = await this.client('workload').list<KubernetesObject>(
        NODECLAIM.apiVersion,
        NODECLAIM.kind,
      );
    } catch (err) {
      if (isUnknownKind(err)) return 0;
      throw err;
    }
    const remaining = claims.filter((c) => !c.metadata?.deletionTimestamp);
    for (const claim of remaining)
      await this.client('workload').delete({
        apiVersion: NODECLAIM.apiVersion,
        kind: NODECLAIM.kind,
        name: claim.metadata?.name ?? '',
      });
    return remaining.length;
  }

  async deleteAll(kind: OwnedKind, objects: KubeObject[]): Promise<number> {
    for (const object of objects) {
      await this.client(kind.target).delete({
        apiVersion: kind.apiVersion,
        kind: kind.kind,
        name: object.metadata.name,
        ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}),
      });
    }
    return objects.length;
  }

  /** Deletes what carries the fleet's label but is no longer rendered, in reverse apply order. */
  async prune(desired: readonly TargetedObject[]): Promise<number> {
    const wanted = new Set(desired.map(({ object }) => keyOf(object)));
    let pruned = 0;
    for (const kind of [...this.provider.ownedKinds()].reverse()) {
      const stale = (await this.list(kind)).filter((o) => !wanted.has(keyOf(o)));
      pruned += await this.deleteAll(kind, stale);
    }
    return pruned;
  }
}
