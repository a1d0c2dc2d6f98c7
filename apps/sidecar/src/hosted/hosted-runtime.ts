import {
  DEPLOYMENT,
  NODECLAIM,
  NODEPOOL,
  type ClusterMetrics,
  type Condition,
  type ReconcileOrder,
} from '@fleet/contracts';
import {
  InvalidDesiredStateError,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  NODEPOOL_LABEL,
  autoNodeConditions,
  autoNodeEnabledCondition,
  autoNodeRoleArn,
  autoNodeSetByFleet,
  renderAutoNodePatch,
  renderGuestObjects,
  type ClusterDriver,
  type HostedMode,
  type KubeObject,
} from '@fleet/cloud-provider';
import {
  HOSTED_CLUSTER,
  HOSTED_CONTROL_PLANE,
  observeHostedMode,
  type ClusterObjectReader,
  type HostedAwsInfrastructure,
  type HostedModeObservation,
} from '@fleet/discovery';
import { Watch } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { ApiServers } from '../kube/api-servers.js';
import { describeKubeError, isNotFound } from '../kube/cluster-client.js';
import { DriftDetector } from '../drift/drift-detector.js';
import { ResourceWatch } from '../kube/resource-watch.js';
import { ConditionSet } from '../reconcile/conditions.js';
import type { ReconcileResult } from '../reconcile/reconciler.js';
import { degraded } from '../reconcile/outcome.js';
import { OrderQueue } from '../reconcile/order-queue.js';
import { GuestConnection } from './guest-connection.js';
import type { StatusSnapshot } from '../runtime.js';

export interface HostedRuntimeOptions {
  apiServers: ApiServers;
  driver: ClusterDriver<HostedAwsInfrastructure>;
  /** Reads on the management cluster, for mode detection. */
  reader: ClusterObjectReader;
  /** The mode this sidecar was asked to run the cluster in (HOSTED_MODE). */
  mode: HostedMode;
  /** The HCP namespace the sidecar runs in. */
  hcpNamespace: string;
  log: Logger;
  /** While HyperShift is still enabling or disabling AutoNode: look again at least this often. */
  requeueMs?: number;
  /**
   * The mounted guest kubeconfig (hcco-kubeconfig). HyperShift rotates that Secret and the
   * kubelet rewrites the file; the guest client is rebuilt when its content changes, so a
   * rotation needs no restart. Without it, the ApiServers' workload client is used as built.
   */
  guestKubeconfigPath?: string;
}

const isUnserved = (err: unknown) => isNotFound(err);

/** The refusal of `render` (field and reason), or undefined when it renders. */
function invalidDesiredState(render: () => unknown): string | undefined {
  try {
    render();
    return undefined;
  } catch (err) {
    if (err instanceof InvalidDesiredStateError) return err.message;
    throw err;
  }
}

/**
 * Why converged mode is refused, from openshift/hypershift 3ee9615567ac: each piece Karpenter
 * needs on a hosted cluster is produced only while HostedCluster.spec.autoNode is set.
 */
export const CONVERGED_MODE_UNSUPPORTED =
  'converged mode (the fleet running Karpenter without spec.autoNode) cannot work on HyperShift: ' +
  'its karpenterignition controller writes Karpenter user data only with spec.autoNode ' +
  '(karpenter-operator/controllers/karpenterignition), the NodePool token gets its Karpenter and AMI labels ' +
  'only with it (hypershift-operator/controllers/nodepool/token.go), the default security group is tagged ' +
  'karpenter.sh/discovery only with it (hostedcontrolplane_controller.go), and without it the HyperShift ' +
  'operator clears HostedControlPlane status.autoNode and deletes set-karpenter-taint on every reconcile ' +
  '(hostedcluster/karpenter.go). Run this sidecar with HOSTED_MODE=AutoNode: HyperShift then runs Karpenter ' +
  '(with its standalone karpenter-operator where the KarpenterOperator feature gate enables it) and the fleet drives it';

/**
 * A hosted cluster. In AutoNode mode HyperShift runs Karpenter (its karpenter-operator and the
 * operand in the HCP namespace), the sidecar drives it: enabling sets HostedCluster.spec.autoNode,
 * disabling clears it; in the guest the sidecar keeps the default OpenshiftEC2NodeClass and the
 * NodePools of desired state, and it reports what HyperShift reports. In converged mode the
 * sidecar runs Karpenter itself (converged-mode.ts), never beside HyperShift's own operator:
 * then it writes nothing and reports ConflictingKarpenterOperator.
 */
export class HostedRuntime {
  /** HyperShift approves a hosted cluster's CSRs (AutoNode); the sidecar approves none. */
  readonly approver = undefined;
  private readonly hcps: ResourceWatch;
  private readonly deployments: ResourceWatch;
  /** Orders, re-checks and drift corrections, one at a time (the standalone runtime's queue). */
  private readonly queue: OrderQueue;
  private previous: Condition[] = [];
  private counts: ClusterMetrics = {};
  private debounce?: NodeJS.Timeout;
  private readonly offs: (() => void)[] = [];
  /** The guest: its client (following a rotated kubeconfig), watches and served NodeClass. */
  private readonly guestConnection: GuestConnection;
  readonly drift: DriftDetector;
  /** Kept across reports, so its lastTransitionTime only moves when its status does. */
  private readonly driftCondition = new ConditionSet();

  constructor(private readonly options: HostedRuntimeOptions) {
    const { apiServers, hcpNamespace, log } = options;
    this.queue = new OrderQueue({
      reconcile: async (order) => {
        const conditions = new ConditionSet(this.previous);
        const outcome = await this.reconcile(order, conditions);
        this.previous = conditions.list();
        return { ...outcome, conditions: this.previous };
      },
      requeueMs: options.requeueMs ?? 2_000,
      log,
    });
    const watch = new Watch(apiServers.kubeConfig('management'));
    const objects = apiServers.client('management').objects;
    this.hcps = new ResourceWatch(objects, watch, HOSTED_CONTROL_PLANE, log, {
      namespace: hcpNamespace,
      maxBackoffMs: 5_000,
    });
    this.deployments = new ResourceWatch(objects, watch, DEPLOYMENT, log, {
      namespace: hcpNamespace,
      maxBackoffMs: 5_000,
    });
    this.drift = new DriftDetector({
      log: log.child({ controller: 'drift' }),
      onChange: (drifted) => this.queue.driftChanged(drifted),
    });
    this.guestConnection = new GuestConnection({
      apiServers,
      ...(options.guestKubeconfigPath ? { guestKubeconfigPath: options.guestKubeconfigPath } : {}),
      log,
      onEvent: (type, object) => this.drift.observe(type, object),
    });
  }

  start(): void {
    // HyperShift's changes (spec.autoNode copied, its Deployments, status.autoNode) are the
    // signal to look again; the order is re-run, which only reads when nothing changed.
    const again = () => this.soon();
    this.offs.push(this.hcps.on(again), this.deployments.on(again));
    this.hcps.start();
    this.deployments.start();
    this.guestConnection.start();
  }

  /** Looks again shortly (events come in bursts). */
  private soon(): void {
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => void this.queue.recheck(), 100);
  }

  async stop(): Promise<void> {
    clearTimeout(this.debounce);
    for (const off of this.offs.splice(0)) off();
    this.hcps.stop();
    this.deployments.stop();
    this.guestConnection.stop();
    this.options.driver.close();
    await this.queue.stop();
  }

  onChange(listener: (urgent: boolean) => void): () => void {
    return this.queue.onChange(listener);
  }

  apply(order: ReconcileOrder): Promise<ReconcileResult> {
    return this.queue.apply(order);
  }

  /** Resolves when orders and re-checks in flight have settled (for tests). */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  /** The shared Degraded (outcome.ts); `requeue` for failures that heal by themselves. */
  private degraded(conditions: ConditionSet, reason: string, message: string, requeue = false) {
    return { ...degraded(this.options.log, conditions, reason, message), requeue };
  }

  private async reconcile(
    order: ReconcileOrder,
    conditions: ConditionSet,
  ): Promise<Omit<ReconcileResult, 'conditions'>> {
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

    const discovery = await this.options.driver.discover();
    if (!discovery.ok) return this.degraded(conditions, discovery.reason, discovery.message, true);
    const infra = discovery.infrastructure;
    for (const c of discovery.conditions ?? [])
      conditions.set(c.type, c.status, c.reason, c.message);
    this.counts = {
      ...(infra.autoNodeStatus.nodeCount !== undefined
        ? { nodes: infra.autoNodeStatus.nodeCount }
        : {}),
      ...(infra.autoNodeStatus.nodeClaimCount !== undefined
        ? { nodeClaims: infra.autoNodeStatus.nodeClaimCount }
        : {}),
      ...(infra.autoNodeStatus.vcpus !== undefined ? { vcpus: infra.autoNodeStatus.vcpus } : {}),
    };

    let mode: HostedModeObservation;
    try {
      mode = await observeHostedMode(this.options.reader, this.options.hcpNamespace, infra);
    } catch (err) {
      return this.degraded(
        conditions,
        'KubernetesLookupFailed',
        `reading HyperShift's Karpenter Deployments in ${this.options.hcpNamespace}: ${describeKubeError(err)}`,
        true,
      );
    }

    if (this.options.mode === 'Converged') return this.converged(conditions);
    conditions.set(
      'HostedMode',
      'True',
      'AutoNode',
      'HyperShift runs Karpenter (HostedCluster spec.autoNode); the fleet drives it',
    );

    let applied = 0;
    let pruned = 0;
    const management = this.options.apiServers.client('management');
    const hostedCluster = `HostedCluster ${infra.hostedCluster.namespace}/${infra.hostedCluster.name}`;
    const readHostedCluster = () =>
      management.read({
        apiVersion: HOSTED_CLUSTER.apiVersion,
        kind: HOSTED_CLUSTER.kind,
        name: infra.hostedCluster.name,
        namespace: infra.hostedCluster.namespace,
      });
    let setOutsideFleet = false;
    try {
      const before = await readHostedCluster();
      if (!before)
        return this.degraded(
          conditions,
          'HostedClusterNotFound',
          `${hostedCluster}, named by HostedControlPlane ${infra.hcpNamespace}/${infra.hcpName}, does not exist`,
          true,
        );
      const setByFleet = autoNodeSetByFleet(before);
      if (spec.enabled) {
        const roleARN = autoNodeRoleArn(spec, infra);
        if (!roleARN) {
          return this.degraded(
            conditions,
            'WebIdentityRoleMissing',
            `webIdentityRoleArn: required to enable Karpenter on a hosted cluster (${hostedCluster} spec.autoNode.provisionerConfig.karpenter.aws.roleARN), and HyperShift holds none`,
          );
        }
        const render = () => renderGuestObjects(infra, spec, this.guestConnection.nodeClass);
        // Refused desired state writes nothing, spec.autoNode included.
        const refusal = invalidDesiredState(render);
        if (refusal) return this.degraded(conditions, 'InvalidDesiredState', refusal);
        // Taking over an autoNode set by hand marks it as the fleet's.
        if (infra.autoNode?.roleARN !== roleARN || !setByFleet) {
          await management.mergePatch(renderAutoNodePatch(infra.hostedCluster, roleARN));
          applied++;
        }
        // HyperShift installs the CRDs once spec.autoNode is set; the served version decides the
        // class's apiVersion (and what it may hold).
        const nodeClassServed = await this.guestConnection.discoverNodeClass();
        const versionRefusal = invalidDesiredState(render);
        if (versionRefusal) return this.degraded(conditions, 'InvalidDesiredState', versionRefusal);
        const written = nodeClassServed
          ? await this.applyGuest(render(), spec.driftPolicy)
          : undefined;
        if (written === undefined) {
          conditions.set('Degraded', 'False', 'AsExpected', 'no problems');
          conditions.set(
            'Available',
            'False',
            'AutoNodeProgressing',
            "waiting for HyperShift's karpenter-operator to install the Karpenter CRDs in the guest",
          );
          conditions.set(
            'Progressing',
            'True',
            'AutoNodeProgressing',
            'HyperShift is enabling AutoNode',
          );
          return { applied, pruned, requeue: true };
        }
        applied += written.applied;
        pruned += written.pruned;
      } else {
        const removal = await this.removeGuest();
        pruned += removal.pruned;
        if (removal.nodeClaims > 0) {
          conditions.set('Degraded', 'False', 'AsExpected', 'no problems');
          conditions.set('Available', 'True', 'KarpenterDisabling', 'Karpenter is being disabled');
          conditions.set(
            'Progressing',
            'True',
            'WaitingForNodeClaims',
            `waiting for Karpenter to remove ${removal.nodeClaims} NodeClaim(s) before spec.autoNode is cleared on ${hostedCluster}`,
          );
          return { applied, pruned, requeue: true };
        }
        if (infra.autoNode && setByFleet) {
          await management.mergePatch(renderAutoNodePatch(infra.hostedCluster, null));
          applied++;
        }
        setOutsideFleet = infra.autoNode !== undefined && !setByFleet;
      }
    } catch (err) {
      return this.degraded(conditions, 'ApplyFailed', describeKubeError(err), true);
    }

    const live = await readHostedCluster().catch(() => undefined);
    const autoNodeEnabled = autoNodeEnabledCondition(live);
    if (setOutsideFleet) {
      const why = `spec.autoNode on ${hostedCluster} was set outside the fleet; disabling Karpenter in the fleet leaves it (clear it there, or enable Karpenter in the fleet to take it over)`;
      if (autoNodeEnabled)
        conditions.set(
          'AutoNodeEnabled',
          autoNodeEnabled.status,
          autoNodeEnabled.reason,
          autoNodeEnabled.message,
        );
      conditions.set('Available', 'True', 'AutoNodeSetOutsideFleet', why);
      conditions.set('Progressing', 'False', 'AutoNodeSetOutsideFleet', why);
      conditions.set('Degraded', 'False', 'AsExpected', 'no problems');
      return { applied, pruned, requeue: false };
    }
    const view = autoNodeConditions({
      enabled: spec.enabled,
      mode,
      ...(autoNodeEnabled ? { autoNodeEnabled } : {}),
      counts: infra.autoNodeStatus,
    });
    for (const c of view) conditions.set(c.type, c.status, c.reason, c.message);
    const progressing = view.find((c) => c.type === 'Progressing')?.status === 'True';
    return { applied, pruned, requeue: progressing };
  }

  /**
   * Converged mode (the sidecar running Karpenter itself, without spec.autoNode) is refused: no
   * HyperShift build produces what it needs without AutoNode, and HyperShift undoes it (see
   * CONVERGED_MODE_UNSUPPORTED). Nothing is written.
   */
  private converged(conditions: ConditionSet) {
    conditions.set(
      'HostedMode',
      'False',
      'Converged',
      'asked to run Karpenter itself (HOSTED_MODE=Converged)',
    );
    return this.degraded(conditions, 'ConvergedModeUnsupported', CONVERGED_MODE_UNSUPPORTED);
  }

  /** Applies the guest objects and prunes the owned ones no longer rendered; undefined while the CRDs are not served. */
  private async applyGuest(
    objects: ReturnType<typeof renderGuestObjects>,
    driftPolicy: ReconcileOrder['spec']['driftPolicy'],
  ): Promise<{ applied: number; pruned: number } | undefined> {
    const guest = this.guestConnection.client();
    let applied = 0;
    try {
      for (const { object } of objects) {
        // Under REPORT an object with open drift stays as its editor left it.
        if (this.drift.held(object, driftPolicy)) continue;
        this.drift.recordApplied('workload', await guest.apply(object));
        applied++;
      }
    } catch (err) {
      if (isUnserved(err)) return undefined;
      throw err;
    }
    // The CRDs are served now: the watches need not wait out their backoff.
    this.guestConnection.nudge();
    // Before pruning, so the fleet's own deletions are never mistaken for drift.
    this.drift.retain(objects.map(({ object }) => object));
    return { applied, pruned: await this.guestConnection.owned().prune(objects) };
  }

  /**
   * Disabling: the fleet's NodePools and NodeClass go first, while HyperShift's Karpenter still
   * runs to drain and terminate their nodes; spec.autoNode is cleared once no NodeClaim is left.
   */
  private async removeGuest(): Promise<{ pruned: number; nodeClaims: number }> {
    const guest = this.guestConnection.client();
    this.drift.retain([]);
    let pruned = 0;
    try {
      await this.guestConnection.discoverNodeClass();
      pruned = await this.guestConnection.owned().prune([]);
      // Only the fleet's NodeClaims hold the disable back: a guest admin's own NodePools (live,
      // without the fleet's label) keep theirs. A claim whose NodePool is gone was the fleet's.
      const others = new Set(
        (await guest.list<KubeObject>(NODEPOOL.apiVersion, NODEPOOL.kind))
          .filter((pool) => pool.metadata.labels?.[MANAGED_BY_LABEL] !== MANAGED_BY_VALUE)
          .map((pool) => pool.metadata.name),
      );
      const claims = await guest.list<KubeObject>(NODECLAIM.apiVersion, NODECLAIM.kind);
      const fleets = claims.filter(
        (claim) => !others.has(claim.metadata.labels?.[NODEPOOL_LABEL] ?? ''),
      );
      return { pruned, nodeClaims: fleets.length };
    } catch (err) {
      // No Karpenter CRDs in the guest: nothing of the fleet's can be there.
      if (isUnserved(err)) return { pruned, nodeClaims: 0 };
      throw err;
    }
  }

  lastResult(): { generation: number; result: ReconcileResult } | undefined {
    return this.queue.lastResult();
  }

  snapshot(): Promise<StatusSnapshot | undefined> {
    const last = this.queue.lastResult();
    const order = this.queue.order;
    if (!last || !order) return Promise.resolve(undefined);
    const nodePools = order.spec.enabled ? order.spec.nodePools.length : 0;
    const drifted = this.drift.condition(order.spec.driftPolicy);
    this.driftCondition.set('Drifted', drifted.status, drifted.reason, drifted.message);
    const conditions: Condition[] = [
      ...last.result.conditions.filter((c) => c.type !== 'Drifted'),
      ...this.driftCondition.list(),
    ].sort((a, b) => a.type.localeCompare(b.type));
    return Promise.resolve({
      observedGeneration: last.generation,
      conditions,
      drift: this.drift.list(),
      metrics: { ...this.counts, nodePools },
      csrDecisions: [],
    });
  }
}
