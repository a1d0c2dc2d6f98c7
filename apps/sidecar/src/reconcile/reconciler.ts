import {
  NODECLAIM,
  NODEPOOL,
  type ClusterAutoscalerState,
  type Condition,
  type ReconcileOrder,
} from '@fleet/contracts';
import {
  InvalidDesiredStateError,
  OWNED_BY_SELECTOR,
  renderDesiredObjects,
  type ClusterDriver,
  type ClusterTarget,
  type FieldCause,
  type KubeObject,
  type OwnedKind,
  type TargetedObject,
} from '@fleet/cloud-provider';
import type { Logger } from 'pino';
import type { ClusterAutoscalerSwitch } from '../cluster-autoscaler/cluster-autoscaler.js';
import type { CsrApprover } from '../csr/csr-approver.js';
import { describeKubeError, isUnknownKind, type ClusterClient } from '../kube/cluster-client.js';
import type { CrdValidator } from '../nodeclass/crd-validation.js';
import type { NodeClassController } from '../nodeclass/nodeclass-controller.js';
import { ConditionSet } from './conditions.js';

export interface ReconcilerDeps {
  apiServers: { client(target: ClusterTarget): ClusterClient };
  driver: ClusterDriver;
  /** CRD manifests the operand needs, loaded once at start-up. */
  crds: readonly TargetedObject[];
  validator: CrdValidator;
  nodeClasses?: NodeClassController;
  approver?: CsrApprover;
  clusterAutoscaler?: ClusterAutoscalerSwitch;
  log: Logger;
  /** After the CRDs are installed, so watches waiting for them start now. */
  onCrdsInstalled?: () => void;
  /** Each step of a multi-step change (disabling Karpenter), as it happens. */
  onProgress?: (conditions: Condition[]) => void;
}

export interface ReconcileResult {
  conditions: Condition[];
  applied: number;
  pruned: number;
  /** The order is not done (NodeClaims draining): reconcile it again on change or soon. */
  requeue: boolean;
  clusterAutoscaler?: ClusterAutoscalerState;
}

type Outcome = Omit<ReconcileResult, 'conditions'>;

const keyOf = (o: {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string };
}) => `${o.apiVersion}/${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
const describeObject = (o: KubeObject) =>
  `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;

/**
 * Brings one cluster to an order's desired state: discover, render through the CloudProvider,
 * check against the real CRDs, apply with server-side apply, prune what the fleet owns and no
 * longer wants, switch the Cluster Autoscaler. Rendering is deterministic and apply idempotent,
 * so the same order twice changes nothing. Disabling Karpenter is a sequence that waits on
 * Karpenter itself (NodeClaim finalizers), so it returns `requeue` instead of blocking.
 */
export class Reconciler {
  private crdsInstalled = false;
  private previous: Condition[] = [];

  constructor(private readonly deps: ReconcilerDeps) {}

  private get provider() {
    return this.deps.driver.provider;
  }

  private client(target: ClusterTarget): ClusterClient {
    return this.deps.apiServers.client(target);
  }

  async reconcile(order: ReconcileOrder): Promise<ReconcileResult> {
    const conditions = new ConditionSet(this.previous);
    const result = await this.run(order, conditions);
    this.previous = conditions.list();
    return { ...result, conditions: this.previous };
  }

  private async run(order: ReconcileOrder, conditions: ConditionSet): Promise<Outcome> {
    const { spec } = order;
    if (spec.paused) {
      conditions.set(
        'Paused',
        'True',
        'PausedByFleet',
        'reconciliation is paused; the cluster is left as it is',
      );
      return { applied: 0, pruned: 0, requeue: false };
    }
    conditions.set('Paused', 'False', 'AsExpected', 'reconciling');

    try {
      await this.installCrds();
    } catch (err) {
      return this.degraded(
        conditions,
        'ApplyFailed',
        `applying the CustomResourceDefinitions: ${describeKubeError(err)}`,
      );
    }
    if (!spec.enabled) return this.disable(order, conditions);

    const discovery = await this.deps.driver.discover();
    if (!discovery.ok) return this.degraded(conditions, discovery.reason, discovery.message);
    const infra = discovery.infrastructure;
    this.deps.approver?.setNodeIdentityCheck(this.deps.driver.nodeIdentity(infra));

    let desired: TargetedObject[];
    try {
      desired = renderDesiredObjects(this.provider, infra, spec);
    } catch (err) {
      if (err instanceof InvalidDesiredStateError) {
        const overrides = err.causes.some((c) => c.field.startsWith('nodeClassOverrides'));
        return this.degraded(
          conditions,
          overrides ? 'InvalidNodeClassOverrides' : 'InvalidDesiredState',
          err.message,
        );
      }
      throw err;
    }
    // Everything is checked against the real CRDs before the first write: an order is applied
    // whole or not at all.
    const invalid: FieldCause[] = [];
    let invalidNodeClass = false;
    for (const { object } of desired) {
      const causes = this.deps.validator.validate(object);
      if (causes.length === 0) continue;
      if (object.kind === this.provider.nodeClass.kind) invalidNodeClass = true;
      invalid.push(
        ...causes.map((c) => ({
          field: `${describeObject(object)}: ${c.field}`,
          message: c.message,
        })),
      );
    }
    if (invalid.length > 0) {
      return this.degraded(
        conditions,
        invalidNodeClass ? 'InvalidNodeClassOverrides' : 'InvalidDesiredState',
        invalid.map((c) => `${c.field}: ${c.message}`).join('; '),
      );
    }

    let applied = 0;
    let current = '';
    try {
      for (const { target, object } of desired) {
        current = describeObject(object);
        await this.client(target).apply(object);
        applied++;
      }
    } catch (err) {
      return this.degraded(
        conditions,
        'ApplyFailed',
        `applying ${current}: ${describeKubeError(err)}`,
        applied,
      );
    }
    const defaultNodeClass = desired.find(
      ({ object }) =>
        object.kind === this.provider.nodeClass.kind &&
        object.metadata.name === this.provider.defaultNodeClassName,
    );
    if (defaultNodeClass)
      this.deps.nodeClasses?.setTarget({ infra, defaultNodeClass: defaultNodeClass.object });

    let pruned: number;
    try {
      pruned = await this.prune(desired);
    } catch (err) {
      return this.degraded(conditions, 'PruneFailed', describeKubeError(err), applied);
    }

    const cas = await this.clusterAutoscaler(order, conditions);
    if (cas === 'failed') return { applied, pruned, requeue: false };

    conditions.set('Degraded', 'False', 'AsExpected', 'the desired state is applied');
    conditions.set(
      'Available',
      'True',
      'AsExpected',
      `Karpenter is deployed with ${spec.nodePools.length} NodePool(s)`,
    );
    conditions.set('Progressing', 'False', 'AsExpected', `generation ${order.generation} applied`);
    return { applied, pruned, requeue: false, ...(cas ? { clusterAutoscaler: cas } : {}) };
  }

  /**
   * Disabling, in Karpenter's own order: NodePools go (no new nodes), NodeClaims drain (their
   * finalizers are Karpenter's, so the operand must keep running), then NodeClasses, then the
   * operand and everything else the fleet created, then the Cluster Autoscaler comes back if the
   * order asks for it. Each pass does what it can and reports where it waits.
   */
  private async disable(order: ReconcileOrder, conditions: ConditionSet): Promise<Outcome> {
    this.deps.nodeClasses?.setTarget(undefined);
    const kinds = this.provider.ownedKinds();
    const nodePoolKind = kinds.find((k) => k.kind === NODEPOOL.kind);
    const nodeClassKind = kinds.find((k) => k.kind === this.provider.nodeClass.kind);
    const step = (reason: string, message: string) => {
      conditions.set('Progressing', 'True', reason, message);
      conditions.set('Available', 'False', reason, 'Karpenter is being disabled');
      this.deps.onProgress?.(conditions.list());
      this.deps.log.info({ reason }, message);
    };
    let pruned = 0;
    try {
      const nodePools = nodePoolKind ? await this.listOwned(nodePoolKind) : [];
      if (nodePools.length > 0) {
        step(
          'DeletingNodePools',
          `deleting ${nodePools.length} NodePool(s): ${nodePools.map((o) => o.metadata.name).join(', ')}`,
        );
        pruned += await this.deleteAll(nodePoolKind!, nodePools);
      }
      const nodeClaims = await this.listNodeClaims();
      if (nodeClaims.length > 0) {
        step(
          'WaitingForNodeClaims',
          `${nodeClaims.length} NodeClaim(s) still terminating (${nodeClaims.slice(0, 5).join(', ')}${nodeClaims.length > 5 ? ', ...' : ''}); the operand stays until Karpenter has removed them`,
        );
        return { applied: 0, pruned, requeue: true };
      }
      const nodeClasses = nodeClassKind ? await this.listOwned(nodeClassKind) : [];
      if (nodeClasses.length > 0) {
        step(
          'RemovingNodeClasses',
          `deleting ${nodeClasses.map((o) => describeObject(o)).join(', ')}`,
        );
        pruned += await this.deleteAll(nodeClassKind!, nodeClasses);
        if ((await this.listOwned(nodeClassKind!)).length > 0)
          return { applied: 0, pruned, requeue: true };
      }
      const remaining = await this.countOwned();
      if (remaining > 0) {
        step(
          'RemovingOperand',
          `removing the operand and ${remaining} object(s) the fleet created`,
        );
        pruned += await this.prune([]);
      }
    } catch (err) {
      return {
        ...this.degraded(conditions, 'DisableFailed', describeKubeError(err)),
        pruned,
        requeue: true,
      };
    }
    const cas = await this.clusterAutoscaler(order, conditions);
    if (cas === 'failed') return { applied: 0, pruned, requeue: false };
    conditions.set(
      'Degraded',
      'False',
      'AsExpected',
      'nothing of Karpenter is left on the cluster',
    );
    conditions.set(
      'Available',
      'True',
      'KarpenterDisabled',
      'Karpenter is not enabled on this cluster',
    );
    conditions.set('Progressing', 'False', 'AsExpected', `generation ${order.generation} applied`);
    return { applied: 0, pruned, requeue: false, ...(cas ? { clusterAutoscaler: cas } : {}) };
  }

  private async clusterAutoscaler(
    order: ReconcileOrder,
    conditions: ConditionSet,
  ): Promise<ClusterAutoscalerState | 'failed' | undefined> {
    if (!this.deps.clusterAutoscaler) return undefined;
    try {
      const outcome = await this.deps.clusterAutoscaler.reconcile(
        order.spec.clusterAutoscalerMode,
        order.spec.enabled,
      );
      if (order.spec.clusterAutoscalerMode !== 'MIGRATE') {
        conditions.set(
          'ClusterAutoscalerMigration',
          'False',
          'NotMigrating',
          `clusterAutoscalerMode is ${order.spec.clusterAutoscalerMode}`,
        );
      }
      for (const c of outcome.conditions) conditions.set(c.type, c.status, c.reason, c.message);
      return outcome.state;
    } catch (err) {
      this.degraded(conditions, 'ClusterAutoscalerFailed', describeKubeError(err));
      conditions.set(
        'ClusterAutoscalerDisabled',
        'Unknown',
        'ClusterAutoscalerCheckFailed',
        describeKubeError(err),
      );
      return 'failed';
    }
  }

  private degraded(
    conditions: ConditionSet,
    reason: string,
    message: string,
    applied = 0,
  ): Outcome {
    this.deps.log.warn({ reason, message }, 'reconcile degraded');
    conditions.set('Degraded', 'True', reason, message);
    conditions.set(
      'Progressing',
      'False',
      reason,
      'waiting for the problem to be fixed or a new order',
    );
    conditions.set('Available', 'False', reason, message);
    return { applied, pruned: 0, requeue: false };
  }

  private async installCrds(): Promise<void> {
    if (this.crdsInstalled) return;
    for (const { target, object } of this.deps.crds) await this.client(target).apply(object);
    this.crdsInstalled = true;
    this.deps.onCrdsInstalled?.();
  }

  private async listOwned(kind: OwnedKind): Promise<KubeObject[]> {
    const namespaces = kind.namespaced ? (kind.namespaces ?? []) : [undefined];
    const out: KubeObject[] = [];
    for (const namespace of namespaces) {
      try {
        const live = await this.client(kind.target).list<KubeObject>(kind.apiVersion, kind.kind, {
          ...(namespace ? { namespace } : {}),
          labelSelector: OWNED_BY_SELECTOR,
        });
        out.push(...live.map((o) => ({ ...o, apiVersion: kind.apiVersion, kind: kind.kind })));
      } catch (err) {
        // A kind whose CRD is not installed (yet) has nothing of ours.
        if (!isUnknownKind(err)) throw err;
      }
    }
    return out;
  }

  private async countOwned(): Promise<number> {
    let n = 0;
    for (const kind of this.provider.ownedKinds()) n += (await this.listOwned(kind)).length;
    return n;
  }

  private async listNodeClaims(): Promise<string[]> {
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

  private async deleteAll(kind: OwnedKind, objects: KubeObject[]): Promise<number> {
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
  private async prune(desired: readonly TargetedObject[]): Promise<number> {
    const wanted = new Set(desired.map(({ object }) => keyOf(object)));
    let pruned = 0;
    for (const kind of [...this.provider.ownedKinds()].reverse()) {
      const stale = (await this.listOwned(kind)).filter((o) => !wanted.has(keyOf(o)));
      pruned += await this.deleteAll(kind, stale);
    }
    return pruned;
  }
}
