import type { Condition, ReconcileOrder } from '@fleet/contracts';
import {
  CLUSTER_CLEANUP_FINALIZER,
  type ClusterDriver,
  type ClusterTarget,
  type TargetedObject,
} from '@fleet/cloud-provider';
import type { Logger } from 'pino';
import type { ClusterLifecycle } from '../cluster-api/cluster-finalizer.js';
import type { ClusterAutoscalerControl } from '../cluster-autoscaler/node-group-sizes.js';
import type { CsrApprover } from '../csr/csr-approver.js';
import { describeKubeError, type ClusterClient } from '../kube/cluster-client.js';
import type { CrdValidator } from '../nodeclass/crd-validation.js';
import type { DriftDetector } from '../drift/drift-detector.js';
import type { NodeClassController } from '../nodeclass/nodeclass-controller.js';
import { ApplyPhase } from './apply-phase.js';
import { ClusterAutoscalerPhase } from './cluster-autoscaler-phase.js';
import { ConditionSet } from './conditions.js';
import { DisablePhase } from './disable-phase.js';
import { degraded, pausedOutcome, type Outcome, type ReconcileResult } from './outcome.js';
import type { SidecarIdentity } from './operand-access.js';
import { OwnedObjects } from './owned-objects.js';

export type { ReconcileResult } from './outcome.js';

export interface ReconcilerDeps {
  apiServers: { client(target: ClusterTarget): ClusterClient };
  driver: ClusterDriver;
  /**
   * CRD manifests of the Karpenter release an order names (undefined: the sidecar's built-in
   * default); refused when the sidecar ships none for it.
   */
  crdsFor(version: string | undefined): Promise<readonly TargetedObject[]>;
  /** Follows the installed release (`use`), so what is applied is checked against its CRDs. */
  validator: CrdValidator;
  nodeClasses?: NodeClassController;
  approver?: CsrApprover;
  clusterAutoscaler?: ClusterAutoscalerControl;
  log: Logger;
  /** Who the sidecar is: it binds its rights in the operand namespace to this (operand-access.ts). */
  identity?: SidecarIdentity;
  /** Told what the fleet applied, so edits by other managers are seen (drift). */
  drift?: DriftDetector;
  /** After the CRDs are installed, so watches waiting for them start now. */
  onCrdsInstalled?: () => void;
  /** Each step of a multi-step change (disabling Karpenter), as it happens. */
  onProgress?: (conditions: Condition[]) => void;
  /**
   * Cluster API: the workload Cluster, held by the fleet's finalizer while Karpenter is enabled.
   * While it is being deleted every order is carried out as a disable (nothing is applied), and
   * the finalizer is released once everything the fleet created is gone.
   */
  clusterLifecycle?: ClusterLifecycle;
}

/**
 * Brings one cluster to an order's desired state: discover, render through the CloudProvider,
 * check against the real CRDs, apply with server-side apply, prune what the fleet owns and no
 * longer wants, switch the Cluster Autoscaler. Rendering is deterministic and apply idempotent,
 * so the same order twice changes nothing. Disabling Karpenter is a sequence that waits on
 * Karpenter itself (NodeClaim finalizers), so it returns `requeue` instead of blocking.
 */
export class Reconciler {
  /** The release whose CRDs are installed; null before the first install. */
  private installedRelease: string | undefined | null = null;
  /** The release whose CRDs rendered objects are validated against; null before the first. */
  private validatedRelease: string | undefined | null = null;
  private previous: Condition[] = [];
  private readonly apply: ApplyPhase;
  private readonly disable: DisablePhase;

  constructor(private readonly deps: ReconcilerDeps) {
    const owned = new OwnedObjects(deps.apiServers, deps.driver.provider);
    const clusterAutoscaler = new ClusterAutoscalerPhase(deps.clusterAutoscaler, deps.log);
    this.apply = new ApplyPhase(deps, owned, clusterAutoscaler);
    this.disable = new DisablePhase(deps, owned, clusterAutoscaler);
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
    const lifecycle = this.deps.clusterLifecycle;
    // A deleting Cluster is cleaned up whatever the order says (paused included): its deletion
    // waits on our finalizer, and nothing is installed or applied for it any more.
    if (lifecycle?.deleting()) return this.removeForDeletion(order, conditions, lifecycle);
    const paused = pausedOutcome(spec, conditions);
    if (paused) return paused;

    const crdsFailed = (err: unknown) =>
      degraded(
        this.deps.log,
        conditions,
        'ApplyFailed',
        `applying the CustomResourceDefinitions: ${describeKubeError(err)}`,
      );
    if (!spec.enabled) {
      try {
        await this.installCrds(spec.operand?.version);
      } catch (err) {
        return crdsFailed(err);
      }
      const outcome = await this.disable.run(order, conditions);
      return lifecycle ? this.releaseWhenDone(outcome, conditions, lifecycle) : outcome;
    }
    // An enabled order is checked against the release's CRDs first, and installs them only once
    // every check has passed: a refused order (discovery, the cloud, the CRDs) writes nothing.
    try {
      await this.validateWith(spec.operand?.version);
    } catch (err) {
      return crdsFailed(err);
    }
    return this.apply.run(order, conditions, async () => {
      try {
        await this.installCrds(spec.operand?.version);
      } catch (err) {
        return crdsFailed(err);
      }
      if (!lifecycle) return undefined;
      // The finalizer once the order has passed every check (a refused order writes nothing,
      // the Cluster included), before the first MachineDeployment: a Cluster deleted from then
      // on waits for the cleanup.
      let hold;
      try {
        hold = await lifecycle.hold();
      } catch (err) {
        return degraded(
          this.deps.log,
          conditions,
          'ClusterFinalizerFailed',
          `adding the finalizer ${CLUSTER_CLEANUP_FINALIZER} to ${lifecycle.description}: ${describeKubeError(err)}`,
        );
      }
      return hold === 'deleting' ? this.removeForDeletion(order, conditions, lifecycle) : undefined;
    });
  }

  /**
   * The Cluster is being deleted: the disable path (NodePools, then NodeClaims — the provider
   * deletes their Machines — then the MachineDeployments, their templates and the operand), with
   * every remaining NodeClaim deleted too, then the finalizer goes.
   */
  private async removeForDeletion(
    order: ReconcileOrder,
    conditions: ConditionSet,
    lifecycle: ClusterLifecycle,
  ): Promise<Outcome> {
    const outcome = await this.disable.run(order, conditions, {
      reason: 'ClusterDeleting',
      message: `${lifecycle.description} is being deleted: Karpenter is removed before the fleet's finalizer ${CLUSTER_CLEANUP_FINALIZER} is`,
    });
    const done = await this.releaseWhenDone(outcome, conditions, lifecycle);
    if (!done.requeue && conditions.get('Degraded')?.status !== 'True') {
      conditions.set(
        'Available',
        'False',
        'ClusterDeleting',
        `${lifecycle.description} is being deleted; nothing of Karpenter is left`,
      );
      conditions.set(
        'Progressing',
        'False',
        'ClusterDeleting',
        `everything the fleet created is gone and ${CLUSTER_CLEANUP_FINALIZER} removed: the Cluster's deletion goes on`,
      );
    }
    return done;
  }

  /** Once a disable is complete (nothing left, not degraded), the Cluster is let go. */
  private async releaseWhenDone(
    outcome: Outcome,
    conditions: ConditionSet,
    lifecycle: ClusterLifecycle,
  ): Promise<Outcome> {
    if (outcome.requeue || conditions.get('Degraded')?.status === 'True') return outcome;
    try {
      await lifecycle.release();
    } catch (err) {
      return {
        ...degraded(
          this.deps.log,
          conditions,
          'ClusterFinalizerFailed',
          `removing the finalizer ${CLUSTER_CLEANUP_FINALIZER} from ${lifecycle.description}: ${describeKubeError(err)}`,
        ),
        pruned: outcome.pruned,
        requeue: true,
      };
    }
    return outcome;
  }

  /**
   * The CRDs of the order's Karpenter release, before anything that uses them: an upgrade
   * installs the new release's CRDs before the new controller rolls out, as Karpenter's upgrade
   * guide requires, and the objects of this order are validated against them.
   */
  private async installCrds(release: string | undefined): Promise<void> {
    if (this.installedRelease === release) return;
    const crds = await this.validateWith(release);
    for (const { target, object } of crds) await this.client(target).apply(object);
    this.installedRelease = release;
    this.deps.onCrdsInstalled?.();
  }

  /** Rendered objects are checked against `release`'s CRDs from now on; nothing is written. */
  private async validateWith(release: string | undefined): Promise<readonly TargetedObject[]> {
    const crds = await this.deps.crdsFor(release);
    if (this.validatedRelease !== release) {
      this.deps.validator.use(crds);
      this.validatedRelease = release;
    }
    return crds;
  }
}
