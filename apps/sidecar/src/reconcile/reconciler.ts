import type { Condition, ReconcileOrder } from '@fleet/contracts';
import {
  InvalidDesiredStateError,
  OWNED_BY_SELECTOR,
  renderDesiredObjects,
  type AwsStandaloneCloudProvider,
  type KubeObject,
  type OwnedKind,
  type TargetedObject,
} from '@fleet/cloud-provider';
import { discoverAwsStandalone, type ClusterObjectReader } from '@fleet/discovery';
import type { EC2Client } from '@aws-sdk/client-ec2';
import type { Logger } from 'pino';
import { describeKubeError, isUnknownKind, type ClusterClient } from '../kube/cluster-client.js';
import { ConditionSet } from './conditions.js';

export interface ReconcilerDeps {
  cluster: ClusterClient;
  reader: ClusterObjectReader;
  ec2: (region: string) => EC2Client;
  provider: AwsStandaloneCloudProvider;
  /** CRD manifests the operand needs, loaded once at start-up. */
  crds: readonly TargetedObject[];
  log: Logger;
}

export interface ReconcileResult {
  conditions: Condition[];
  applied: number;
  pruned: number;
}

const apiVersionOf = (kind: OwnedKind) => (kind.group ? `${kind.group}/${kind.version}` : kind.version);
const keyOf = (o: { apiVersion: string; kind: string; metadata: { name?: string; namespace?: string } }) =>
  `${o.apiVersion}/${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;

/**
 * Brings one cluster to an order's desired state: discover, render through the CloudProvider,
 * apply with server-side apply, prune what the fleet owns and no longer wants. Rendering is
 * deterministic and apply is idempotent, so the same order twice changes nothing.
 */
export class Reconciler {
  private crdsInstalled = false;
  private previous: Condition[] = [];

  constructor(private readonly deps: ReconcilerDeps) {}

  async reconcile(order: ReconcileOrder): Promise<ReconcileResult> {
    const conditions = new ConditionSet(this.previous);
    const result = await this.run(order, conditions);
    this.previous = conditions.list();
    return { ...result, conditions: this.previous };
  }

  private async run(order: ReconcileOrder, conditions: ConditionSet): Promise<Omit<ReconcileResult, 'conditions'>> {
    const { spec } = order;
    if (spec.paused) {
      conditions.set('Paused', 'True', 'PausedByFleet', 'reconciliation is paused; the cluster is left as it is');
      return { applied: 0, pruned: 0 };
    }
    conditions.set('Paused', 'False', 'AsExpected', 'reconciling');

    let desired: TargetedObject[] = [];
    if (spec.enabled) {
      const discovery = await discoverAwsStandalone({ reader: this.deps.reader, ec2: this.deps.ec2 });
      if (!discovery.ok) {
        return this.degraded(conditions, discovery.reason, discovery.message);
      }
      try {
        desired = renderDesiredObjects(this.deps.provider, discovery.infrastructure, spec);
      } catch (err) {
        if (err instanceof InvalidDesiredStateError) return this.degraded(conditions, 'InvalidDesiredState', err.message);
        throw err;
      }
    }

    let applied = 0;
    let current = 'the CustomResourceDefinitions';
    try {
      await this.installCrds();
      for (const { object } of desired) {
        current = `${object.kind} ${object.metadata.namespace ? `${object.metadata.namespace}/` : ''}${object.metadata.name}`;
        await this.deps.cluster.apply(object);
        applied++;
      }
    } catch (err) {
      return this.degraded(conditions, 'ApplyFailed', `applying ${current}: ${describeKubeError(err)}`, applied);
    }

    let pruned = 0;
    try {
      pruned = await this.prune(desired);
    } catch (err) {
      return this.degraded(conditions, 'PruneFailed', describeKubeError(err), applied);
    }

    conditions.set('Degraded', 'False', 'AsExpected', 'the desired state is applied');
    if (spec.enabled) {
      conditions.set('Available', 'True', 'AsExpected', `Karpenter is deployed with ${spec.nodePools.length} NodePool(s)`);
    } else {
      conditions.set('Available', 'True', 'KarpenterDisabled', 'Karpenter is not enabled on this cluster');
    }
    conditions.set('Progressing', 'False', 'AsExpected', `generation ${order.generation} applied`);
    return { applied, pruned };
  }

  private degraded(conditions: ConditionSet, reason: string, message: string, applied = 0) {
    this.deps.log.warn({ reason, message }, 'reconcile degraded');
    conditions.set('Degraded', 'True', reason, message);
    conditions.set('Progressing', 'False', reason, 'waiting for the problem to be fixed or a new order');
    conditions.set('Available', 'False', reason, message);
    return { applied, pruned: 0 };
  }

  private async installCrds(): Promise<void> {
    if (this.crdsInstalled) return;
    for (const { object } of this.deps.crds) await this.deps.cluster.apply(object);
    this.crdsInstalled = true;
  }

  /** Deletes what carries the fleet's label but is no longer rendered, in reverse apply order. */
  private async prune(desired: readonly TargetedObject[]): Promise<number> {
    const wanted = new Set(desired.map(({ object }) => keyOf(object)));
    let pruned = 0;
    for (const kind of [...this.deps.provider.ownedKinds()].reverse()) {
      const namespaces = kind.namespaced ? (kind.namespaces ?? []) : [undefined];
      for (const namespace of namespaces) {
        let live: KubeObject[];
        try {
          live = await this.deps.cluster.list<KubeObject>(apiVersionOf(kind), kind.kind, {
            ...(namespace ? { namespace } : {}),
            labelSelector: OWNED_BY_SELECTOR,
          });
        } catch (err) {
          // A kind whose CRD is not installed (yet) has nothing of ours to prune.
          if (isUnknownKind(err)) continue;
          throw err;
        }
        for (const object of live) {
          const withType = { ...object, apiVersion: apiVersionOf(kind), kind: kind.kind };
          if (wanted.has(keyOf(withType))) continue;
          await this.deps.cluster.delete({
            apiVersion: withType.apiVersion,
            kind: kind.kind,
            name: object.metadata.name,
            ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}),
          });
          pruned++;
        }
      }
    }
    return pruned;
  }
}
