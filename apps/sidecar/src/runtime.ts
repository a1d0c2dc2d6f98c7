import { KARPENTER_CR, type ReconcileOrder } from '@fleet/contracts';
import {
  CLUSTER_CLEANUP_FINALIZER,
  type ClusterDriver,
  type TargetedObject,
} from '@fleet/cloud-provider';
import type { Logger } from 'pino';
import { ClusterFinalizer } from './cluster-api/cluster-finalizer.js';
import { ClusterAutoscalerSwitch } from './cluster-autoscaler/cluster-autoscaler.js';
import {
  CombinedClusterAutoscalerSwitch,
  nodeGroupKinds,
  openShiftAutoscalerKinds,
} from './cluster-autoscaler/combined.js';
import {
  NodeGroupSizesSwitch,
  type ClusterAutoscalerControl,
} from './cluster-autoscaler/node-group-sizes.js';
import { ClusterOperatorController } from './cluster-operator/cluster-operator-controller.js';
import { CsrApprover } from './csr/csr-approver.js';
import { DriftDetector } from './drift/drift-detector.js';
import type { ApiServers } from './kube/api-servers.js';
import type { ClusterClient } from './kube/cluster-client.js';
import { CrdValidator } from './nodeclass/crd-validation.js';
import { NodeClassController } from './nodeclass/nodeclass-controller.js';
import { OrderQueue } from './reconcile/order-queue.js';
import { ClusterWatches } from './kube/cluster-watches.js';
import { ClusterStatus, type StatusSnapshot } from './report/cluster-status.js';
import type { SidecarIdentity } from './reconcile/operand-access.js';
import { PeriodicCheck } from './reconcile/periodic-check.js';
import { Reconciler, type ReconcileResult } from './reconcile/reconciler.js';
import { OwnedObjects } from './reconcile/owned-objects.js';
import { PlanPhase, type PlanResult } from './plan/plan-phase.js';

export interface SidecarRuntimeOptions {
  apiServers: ApiServers;
  /** The platform and topology's driver, chosen by the registry from the order. */
  driver: ClusterDriver;
  /** CRDs of the driver's default Karpenter release. */
  crds: readonly TargetedObject[];
  /** CRDs of another release an order names; without it, only the default release runs. */
  crdsFor?: (version: string) => Promise<readonly TargetedObject[]>;
  log: Logger;
  /** The sidecar's service account, on topologies where it runs on the cluster it changes. */
  identity?: SidecarIdentity;
  /** Reported as the ClusterOperator's versions[name=operator]. */
  version: string;
  csrApprovalsPerMinute: number;
  /** Namespace of the Cluster Autoscaler copy (see cluster-autoscaler.ts). */
  backupNamespace: string;
  /** Cluster API: the Cluster whose worker groups carry the Cluster Autoscaler's annotations. */
  clusterApi?: { namespace: string; clusterName: string };
  /** While disabling waits on NodeClaims: re-check at least this often (watch events come first). */
  requeueMs?: number;
  /**
   * How often to ask the driver whether credentials it handed the operand are due for renewal
   * (`ClusterDriver.credentialsDue`: Cluster API's management token); when they are, the
   * current order is applied again, no new order needed. Default one hour.
   */
  credentialRenewalMs?: number;
}

/** Default of `credentialRenewalMs`: well inside the half-week after which a token is renewed. */
export const DEFAULT_CREDENTIAL_RENEWAL_MS = 3_600_000;

/**
 * Everything a sidecar runs against its cluster, apart from the order queue and the fleet API:
 * the shared watches, the watch-driven controllers (ClusterOperator, NodeClasses, CSR approval),
 * and the reconciler for orders. Orders and their re-checks run one at a time.
 */
export class SidecarRuntime {
  readonly cluster: ClusterClient;
  /** Every watch the sidecar holds: the caches its controllers, drift and reports read. */
  readonly watches: ClusterWatches;
  /** Only where the driver owns a ClusterOperator (standalone OpenShift). */
  readonly operator?: ClusterOperatorController;
  readonly nodeClasses: NodeClassController;
  readonly approver: CsrApprover;
  readonly clusterAutoscaler: ClusterAutoscalerControl;
  readonly reconciler: Reconciler;
  private readonly planner: PlanPhase;
  /** Edits by other managers of what the fleet applied, from the watches' events. */
  readonly drift: DriftDetector;
  /** Orders, re-checks, plans and drift corrections, one at a time. */
  private readonly queue: OrderQueue;
  private requeueDebounce?: NodeJS.Timeout;
  private readonly renderInputContent = new Map<string, string>();
  private readonly offs: (() => void)[] = [];
  private readonly clusterFinalizer?: ClusterFinalizer;
  private readonly credentialRenewal?: PeriodicCheck;
  private deletionDebounce?: NodeJS.Timeout;
  /** What reports say between orders. */
  private readonly status: ClusterStatus;

  constructor(private readonly options: SidecarRuntimeOptions) {
    this.queue = new OrderQueue({
      reconcile: (order) => this.reconciler.reconcile(order),
      afterReconcile: () => this.operator?.kick(),
      requeueMs: options.requeueMs ?? 5_000,
      log: options.log,
    });
    const { apiServers, driver, log } = options;
    const { provider } = driver;
    this.cluster = apiServers.client('workload');
    // Cluster API: the Cluster Autoscaler's node groups are annotated MachineDeployments and
    // MachineSets on the management cluster; elsewhere, OpenShift's ClusterAutoscaler objects.
    // OpenShift's own Cluster API (one API server) has both: each mode acts on both.
    const autoscalerLog = log.child({ controller: 'cluster-autoscaler' });
    const propose = provider.proposeMigration?.bind(provider);
    const openShiftObjects = () =>
      new ClusterAutoscalerSwitch(this.cluster, autoscalerLog, options.backupNamespace, propose);
    const nodeGroups = (clusterApi: { namespace: string; clusterName: string }) =>
      new NodeGroupSizesSwitch(apiServers.client('management'), clusterApi, autoscalerLog);
    this.clusterAutoscaler = !options.clusterApi
      ? openShiftObjects()
      : apiServers.single
        ? new CombinedClusterAutoscalerSwitch([
            { control: openShiftObjects(), kinds: openShiftAutoscalerKinds },
            { control: nodeGroups(options.clusterApi), kinds: nodeGroupKinds },
          ])
        : nodeGroups(options.clusterApi);
    this.watches = new ClusterWatches({
      apiServers,
      driver,
      log,
      autoscalerKinds: this.clusterAutoscaler.observedKinds(),
      ...(options.clusterApi ? { clusterApi: options.clusterApi } : {}),
    });
    const w = this.watches;
    if (w.machineConfigPools)
      this.offs.push(w.machineConfigPools.on(() => this.queue.changed(false)));
    if (driver.statusSurfaces.includes('ClusterOperator'))
      this.operator = new ClusterOperatorController({
        cluster: this.cluster,
        provider,
        deployments: w.deployments,
        karpenters: w.karpenters,
        version: options.version,
        log: log.child({ controller: 'cluster-operator' }),
        onChange: () => this.queue.changed(false),
        // No Karpenter CR on this platform (Azure): the fleet's order says what it would.
        ...(provider.customResourceDefinitions().some((s) => s.identity.kind === KARPENTER_CR.kind)
          ? {}
          : { order: () => this.orderForClusterOperator() }),
      });
    this.nodeClasses = new NodeClassController({
      cluster: this.cluster,
      provider,
      nodeClasses: w.nodeClass,
      nodes: w.karpenterNodes,
      ...(w.machineConfigPools && w.kubeletConfigs
        ? { pools: w.machineConfigPools, kubeletConfigs: w.kubeletConfigs }
        : {}),
      log: log.child({ controller: 'nodeclass' }),
      onProblemsChange: () => this.queue.changed(false),
    });
    this.approver = new CsrApprover({
      cluster: this.cluster,
      csrs: w.csrs,
      nodeClaims: w.nodeClaims,
      approvalsPerMinute: options.csrApprovalsPerMinute,
      log: log.child({ controller: 'karpenter-machine-approver' }),
      onDecision: () => this.queue.changed(false),
    });
    this.drift = new DriftDetector({
      log: log.child({ controller: 'drift' }),
      onChange: (drifted) => this.queue.driftChanged(drifted),
    });
    if (options.clusterApi) {
      const { namespace, clusterName } = options.clusterApi;
      const cluster = this.watches.workloadCluster!;
      this.clusterFinalizer = new ClusterFinalizer(
        apiServers.client('management'),
        options.clusterApi,
        () => cluster.get(clusterName, namespace),
        log.child({ controller: 'cluster-finalizer' }),
      );
    }
    if (driver.credentialsDue) {
      const credentialsDue = driver.credentialsDue.bind(driver);
      this.credentialRenewal = new PeriodicCheck({
        intervalMs: options.credentialRenewalMs ?? DEFAULT_CREDENTIAL_RENEWAL_MS,
        what: 'operand credentials',
        log: log.child({ controller: 'credential-renewal' }),
        due: async () => {
          const order = this.queue.order;
          if (!order?.spec.enabled || order.spec.paused || this.clusterFinalizer?.deleting())
            return false;
          return credentialsDue();
        },
        run: () => this.queue.recheck(),
      });
    }
    this.planner = new PlanPhase({
      apiServers,
      driver,
      owned: new OwnedObjects(apiServers, driver.provider),
      log: log.child({ phase: 'plan' }),
    });
    this.reconciler = new Reconciler({
      apiServers,
      driver,
      drift: this.drift,
      crdsFor: async (version) => {
        if (version === undefined || version === driver.provider.defaultRelease)
          return options.crds;
        if (!options.crdsFor)
          throw new Error(`this sidecar ships no CRDs for Karpenter ${version}`);
        return options.crdsFor(version);
      },
      validator: new CrdValidator(options.crds),
      ...(options.identity ? { identity: options.identity } : {}),
      nodeClasses: this.nodeClasses,
      approver: this.approver,
      clusterAutoscaler: this.clusterAutoscaler,
      log,
      onCrdsInstalled: () => w.always().forEach((watch) => watch.nudge()),
      ...(this.clusterFinalizer ? { clusterLifecycle: this.clusterFinalizer } : {}),
      onProgress: (conditions) => this.queue.progress(conditions),
    });
    this.status = new ClusterStatus({
      cluster: this.cluster,
      watches: w,
      nodeClassLabel: driver.provider.nodeClassLabel,
      ...(this.operator ? { operator: this.operator } : {}),
      nodeClasses: this.nodeClasses,
      approver: this.approver,
      clusterAutoscaler: this.clusterAutoscaler,
      drift: this.drift,
    });
  }

  start(): void {
    const w = this.watches;
    for (const watch of w.always()) watch.start();
    this.operator?.start();
    this.nodeClasses.start();
    this.approver.start();
    // While a disable waits for NodeClaims, their deletion is the signal to look again.
    const recheck = () => {
      if (!this.queue.waiting()) return;
      clearTimeout(this.requeueDebounce);
      this.requeueDebounce = setTimeout(() => void this.queue.recheck(true), 50);
    };
    // While DISABLE waits for Karpenter before removing the Cluster Autoscaler, the operand
    // Deployment and the NodeClass status are.
    this.offs.push(w.nodeClaims.on(recheck), w.nodeClass.on(recheck), w.deployments.on(recheck));
    for (const input of w.renderInputs)
      this.offs.push(input.on((type, object) => this.renderInputChanged(type, object)));
    // Drift is read from the watches: those the sidecar holds anyway on what it applies
    // (NodePools, NodeClasses, the operand Deployment, the Karpenter CR) and one per other owned
    // kind; never a request of its own.
    for (const watch of w.applied())
      this.offs.push(watch.on((type, object) => this.drift.observe(type, object)));
    for (const watch of w.autoscaler)
      this.offs.push(watch.on(() => this.status.autoscalerChanged()));
    this.offs.push(w.followOperand());
    if (w.workloadCluster)
      this.offs.push(w.workloadCluster.on((type, object) => this.clusterChanged(type, object)));
    this.credentialRenewal?.start();
  }

  /**
   * The Cluster is being deleted and still waits on our finalizer: clean up now, with the current
   * order (the reconciler turns any order into the removal while the Cluster is deleting), and
   * on every later event until the finalizer is gone. Events are coalesced.
   */
  private clusterChanged(
    type: string,
    object: { metadata?: { deletionTimestamp?: unknown; finalizers?: string[] } },
  ): void {
    if (type === 'DELETED' || !object.metadata?.deletionTimestamp) return;
    if (!(object.metadata.finalizers ?? []).includes(CLUSTER_CLEANUP_FINALIZER)) return;
    if (!this.queue.order) return;
    clearTimeout(this.deletionDebounce);
    this.deletionDebounce = setTimeout(
      () => this.queue.reapply('the Cluster is being deleted: removing Karpenter'),
      50,
    );
  }

  /**
   * A change to what rendering reads (the Proxy) is applied at once with the current order: the
   * operand follows the cluster without waiting for the fleet. Only spec and status count, so a
   * relist or a metadata-only write does not re-apply.
   */
  private renderInputChanged(type: string, object: { metadata?: { name?: string } }): void {
    const key = `${object.metadata?.name ?? ''}`;
    const { spec, status } = object as { spec?: unknown; status?: unknown };
    const content = type === 'DELETED' ? '' : JSON.stringify({ spec, status });
    // Not seen yet is absent: creating the Proxy is a change too.
    if ((this.renderInputContent.get(key) ?? '') === content) return;
    this.renderInputContent.set(key, content);
    this.queue.reapply(`render input ${key} ${type.toLowerCase()}`);
  }

  async stop(): Promise<void> {
    clearTimeout(this.requeueDebounce);
    clearTimeout(this.deletionDebounce);
    await this.credentialRenewal?.stop();
    for (const off of this.offs.splice(0)) off();
    this.operator?.stop();
    this.options.driver.close();
    this.nodeClasses.stop();
    this.approver.stop();
    this.watches.stop();
    await this.queue.stop();
  }

  /** Called with urgent=true for steps that should be reported at once. */
  onChange(listener: (urgent: boolean) => void): () => void {
    return this.queue.onChange(listener);
  }

  /** Applies an order (after any order or re-check in progress). */
  apply(order: ReconcileOrder): Promise<ReconcileResult> {
    return this.queue.apply(order);
  }

  /**
   * A plan of a proposed order (dry runs only), in turn with orders and re-checks so it sees the
   * cluster between them, never half-way through an apply.
   */
  plan(order: ReconcileOrder): Promise<PlanResult> {
    return this.queue.inTurn(() => this.planner.run(order));
  }

  lastResult(): { generation: number; result: ReconcileResult } | undefined {
    return this.queue.lastResult();
  }

  /** What the ClusterOperator shows where no Karpenter CR exists: the order, and a refusal. */
  private orderForClusterOperator():
    { enabled: boolean; refusal?: { reason: string; message: string } } | undefined {
    const order = this.queue.order;
    if (!order) return undefined;
    const degraded = this.queue.lastResult()?.result.conditions.find((c) => c.type === 'Degraded');
    return {
      enabled: order.spec.enabled,
      ...(degraded?.status === 'True'
        ? { refusal: { reason: degraded.reason, message: degraded.message } }
        : {}),
    };
  }

  /** Resolves when orders, re-checks in flight and controllers have settled (for tests). */
  async idle(): Promise<void> {
    await this.queue.idle();
    await Promise.all([this.operator?.idle(), this.nodeClasses.idle(), this.approver.idle()]);
  }

  /** What a report says now; undefined before the first order (nothing to observe against). */
  async snapshot(): Promise<StatusSnapshot | undefined> {
    const last = this.queue.lastResult();
    const order = this.queue.order;
    if (!last || !order) return undefined;
    return this.status.snapshot(order, last);
  }
}
