import {
  DEPLOYMENT,
  type ClusterMetrics,
  type Condition,
  type ReconcileOrder,
} from '@fleet/contracts';
import {
  InvalidDesiredStateError,
  autoNodeConditions,
  autoNodeEnabledCondition,
  autoNodeRoleArn,
  autoNodeSetByFleet,
  renderAutoNodePatch,
  renderGuestObjects,
  type ClusterDriver,
  type HostedMode,
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
import { describeKubeError } from '../kube/cluster-client.js';
import { DriftDetector } from '../drift/drift-detector.js';
import { ResourceWatch } from '../kube/resource-watch.js';
import { ConditionSet } from '../reconcile/conditions.js';
import type { ReconcileResult } from '../reconcile/reconciler.js';
import { degraded, pausedOutcome } from '../reconcile/outcome.js';
import { OrderQueue } from '../reconcile/order-queue.js';
import { GuestConnection } from './guest-connection.js';
import { applyGuestObjects, removeGuestObjects } from './guest-objects.js';
import { refuseConverged } from './converged-refusal.js';
import { withObserved, type StatusSnapshot } from '../report/cluster-status.js';

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
 * A hosted cluster. In AutoNode mode HyperShift runs Karpenter (its karpenter-operator and the
 * operand in the HCP namespace), the sidecar drives it: enabling sets HostedCluster.spec.autoNode,
 * disabling clears it; in the guest the sidecar keeps the default OpenshiftEC2NodeClass and the
 * NodePools of desired state, and it reports what HyperShift reports. Converged mode is refused
 * (converged-refusal.ts). Ordering, requeueing, Degraded, pruning and drift are the reconcile
 * pipeline's (OrderQueue, degraded(), OwnedObjects, DriftDetector); this class supplies the
 * hosted phases: discover, the HostedCluster patch, the guest objects, HyperShift's status.
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
    const client = apiServers.client('management');
    this.hcps = new ResourceWatch(client, watch, HOSTED_CONTROL_PLANE, log, {
      namespace: hcpNamespace,
      maxBackoffMs: 5_000,
    });
    this.deployments = new ResourceWatch(client, watch, DEPLOYMENT, log, {
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
    const paused = pausedOutcome(spec, conditions);
    if (paused) return paused;

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

    if (this.options.mode === 'Converged')
      return this.degraded(conditions, ...refuseConverged(conditions));
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
          ? await applyGuestObjects(this.guestConnection, this.drift, render(), spec.driftPolicy)
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
        const removal = await removeGuestObjects(this.guestConnection, this.drift);
        pruned += removal.pruned;
        if (removal.nodeClaims > 0 || removal.nodeClasses > 0) {
          conditions.set('Degraded', 'False', 'AsExpected', 'no problems');
          conditions.set('Available', 'True', 'KarpenterDisabling', 'Karpenter is being disabled');
          if (removal.nodeClaims > 0)
            conditions.set(
              'Progressing',
              'True',
              'WaitingForNodeClaims',
              `waiting for Karpenter to remove ${removal.nodeClaims} NodeClaim(s) before spec.autoNode is cleared on ${hostedCluster}`,
            );
          // Clearing spec.autoNode removes HyperShift's karpenter-operator, whose finalizer would
          // then hold the class Terminating for good.
          else
            conditions.set(
              'Progressing',
              'True',
              'WaitingForNodeClass',
              `waiting for HyperShift's karpenter-operator to release the fleet's OpenshiftEC2NodeClass (its finalizer) before spec.autoNode is cleared on ${hostedCluster}`,
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
    return Promise.resolve({
      observedGeneration: last.generation,
      conditions: withObserved(last.result.conditions, this.driftCondition),
      drift: this.drift.list(),
      metrics: { ...this.counts, nodePools },
      csrDecisions: [],
    });
  }
}
