import {
  CERTIFICATE_SIGNING_REQUEST,
  DEPLOYMENT,
  KARPENTER_CR,
  KUBELET_CONFIG,
  MACHINE_CONFIG_POOL,
  NODE,
  NODECLAIM,
  NODEPOOL,
  POD,
  type ResourceIdentity,
} from '@fleet/contracts';
import {
  NODECLASS_LABEL,
  OPERAND_NAME,
  OWNED_BY_SELECTOR,
  type ClusterDriver,
  type ClusterTarget,
} from '@fleet/cloud-provider';
import { CAPI_CLUSTER } from '@fleet/discovery';
import { Watch } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { ObservedKind } from '../cluster-autoscaler/node-group-sizes.js';
import type { CsrObject, NodeClaimObject } from '../csr/csr-approver.js';
import type { ApiServers } from './api-servers.js';
import { ResourceWatch, type ResourceWatchOptions } from './resource-watch.js';
import { nodeForMetrics, pendingPodForMetrics } from '../metrics/cluster-metrics.js';

export interface ClusterWatchesOptions {
  apiServers: ApiServers;
  driver: ClusterDriver;
  log: Logger;
  /** What the Cluster Autoscaler observation reads (ClusterAutoscalerControl.observedKinds). */
  autoscalerKinds: readonly ObservedKind[];
  /** Cluster API: the Cluster whose deletion the sidecar follows. */
  clusterApi?: { namespace: string; clusterName: string };
}

/**
 * Every watch a standalone or Cluster API sidecar holds, one Watch per API server: the caches
 * the controllers, the reconcile pipeline (drift) and every report read, so that a cluster at
 * rest costs the sidecar no request.
 */
export class ClusterWatches {
  readonly deployments: ResourceWatch;
  readonly karpenters: ResourceWatch;
  readonly nodeClass: ResourceWatch;
  readonly nodeClaims: ResourceWatch<NodeClaimObject>;
  readonly csrs: ResourceWatch<CsrObject>;
  /** Nodes Karpenter launched (they carry the provider's NodeClass label). */
  readonly karpenterNodes: ResourceWatch;
  /** What every report counts (metrics), from caches, so a report at rest lists nothing. */
  readonly nodes: ResourceWatch;
  readonly nodePools: ResourceWatch;
  readonly pendingPods: ResourceWatch;
  /** Everything the Cluster Autoscaler observation reads; an event makes the next report look again. */
  readonly autoscaler: ResourceWatch[];
  /** The NodeClasses' MachineConfigPools; only where the provider keeps them. */
  readonly machineConfigPools?: ResourceWatch;
  /** Their KubeletConfigs, whose status the launch gate reads. */
  readonly kubeletConfigs?: ResourceWatch;
  /** What rendering reads from the cluster (the Proxy), watched by name (renderInputs). */
  readonly renderInputs: ResourceWatch[];
  /** Cluster API: the workload Cluster on the management cluster (its deletion, our finalizer). */
  readonly workloadCluster?: ResourceWatch;
  /**
   * The fleet's other owned kinds (RBAC, ServiceAccount, ConfigMaps, PodDisruptionBudget,
   * CredentialsRequest, admission policies, ...), by the fleet's label, one watch per namespace:
   * only so drift sees hand edits and deletions of them.
   */
  readonly owned: ResourceWatch[];
  /**
   * Those of them in the operand's namespace, which the sidecar creates and may watch only once
   * its RoleBinding there exists: they run while the operand Deployment does (created after
   * both, pruned before them).
   */
  readonly inOperandNamespace: ResourceWatch[];

  constructor(options: ClusterWatchesOptions) {
    const { apiServers, driver, log } = options;
    const { provider } = driver;
    const watches = new Map<ClusterTarget, Watch>();
    const make = <T extends CsrObject | NodeClaimObject>(
      kind: ResourceIdentity,
      opts: ResourceWatchOptions = {},
      target: ClusterTarget = 'workload',
    ) => {
      let watch = watches.get(target);
      if (!watch) {
        watch = new Watch(apiServers.kubeConfig(target));
        watches.set(target, watch);
      }
      return new ResourceWatch<T>(apiServers.client(target), watch, kind, log, {
        maxBackoffMs: 5_000,
        ...opts,
      });
    };
    const operandTarget = provider.operandTarget ?? 'management';
    this.deployments = make(
      DEPLOYMENT,
      { namespace: provider.operandNamespace, fieldSelector: `metadata.name=${OPERAND_NAME}` },
      operandTarget,
    );
    this.karpenters = make(KARPENTER_CR, {}, 'management');
    this.nodeClass = make(provider.nodeClass);
    this.nodeClaims = make<NodeClaimObject>(NODECLAIM);
    this.csrs = make<CsrObject>(CERTIFICATE_SIGNING_REQUEST);
    this.karpenterNodes = make(NODE, { labelSelector: provider.nodeClassLabel });
    // Every Node and every pending Pod: the metrics read a few fields of each, and a cluster
    // scaling up holds hundreds of either, so only those fields are kept.
    this.nodes = make(NODE, { keep: nodeForMetrics });
    this.nodePools = make(NODEPOOL);
    this.pendingPods = make(POD, {
      fieldSelector: 'status.phase=Pending',
      keep: pendingPodForMetrics,
    });
    if (provider.nodeClassConfigKinds().some((k) => k.kind === MACHINE_CONFIG_POOL.kind)) {
      // Every pool, not only the fleet's: the cluster's own custom pools may claim Karpenter's
      // nodes too (customPoolOverlaps); reports keep the fleet's (machineConfigPoolStates).
      this.machineConfigPools = make(MACHINE_CONFIG_POOL);
      this.kubeletConfigs = make(KUBELET_CONFIG, {
        labelSelector: `${OWNED_BY_SELECTOR},${NODECLASS_LABEL}`,
      });
    }
    this.renderInputs = (provider.renderInputs?.() ?? []).map(({ kind, name }) =>
      make(kind, { fieldSelector: `metadata.name=${name}` }),
    );
    // A kind a cluster does not serve (no ClusterAutoscaler CRD) is looked for again once a minute.
    this.autoscaler = options.autoscalerKinds.map(({ kind, target, ...selection }) =>
      make(kind, { ...selection, maxBackoffMs: 60_000 }, target),
    );
    const watchedAlready = (kind: ResourceIdentity, namespace?: string) =>
      [NODEPOOL, provider.nodeClass, KARPENTER_CR].some(
        (k) => k.apiVersion === kind.apiVersion && k.kind === kind.kind,
      ) ||
      (kind.kind === DEPLOYMENT.kind &&
        kind.apiVersion === DEPLOYMENT.apiVersion &&
        namespace === provider.operandNamespace);
    const owned = provider.ownedKinds().flatMap(({ target, namespaces, ...kind }) =>
      (kind.namespaced ? (namespaces ?? []) : [undefined])
        .filter((namespace) => !watchedAlready(kind, namespace))
        .map((namespace) => ({
          inOperandNamespace:
            namespace === provider.operandNamespace &&
            (apiServers.single || target === operandTarget),
          watch: make(
            kind,
            {
              ...(namespace ? { namespace } : {}),
              labelSelector: OWNED_BY_SELECTOR,
              maxBackoffMs: 60_000,
            },
            target,
          ),
        })),
    );
    this.owned = owned.map((o) => o.watch);
    this.inOperandNamespace = owned.filter((o) => o.inOperandNamespace).map((o) => o.watch);
    if (options.clusterApi) {
      const { namespace, clusterName } = options.clusterApi;
      this.workloadCluster = make(
        CAPI_CLUSTER,
        { namespace, fieldSelector: `metadata.name=${clusterName}` },
        'management',
      );
    }
  }

  /** Every watch that runs from start to stop (those in the operand's namespace follow it). */
  always(): ResourceWatch[] {
    return [
      this.deployments,
      this.karpenters,
      this.nodeClass,
      this.nodeClaims,
      this.csrs,
      this.karpenterNodes,
      this.nodes,
      this.nodePools,
      this.pendingPods,
      ...this.autoscaler,
      ...(this.machineConfigPools ? [this.machineConfigPools] : []),
      ...(this.kubeletConfigs ? [this.kubeletConfigs] : []),
      ...this.renderInputs,
      ...(this.workloadCluster ? [this.workloadCluster] : []),
      ...this.owned.filter((w) => !this.inOperandNamespace.includes(w)),
    ];
  }

  /** What drift reads: what the fleet applies and every other owned kind. */
  applied(): ResourceWatch[] {
    return [this.nodePools, this.nodeClass, this.deployments, this.karpenters, ...this.owned];
  }

  /** The operand's namespace's watches run while the operand Deployment exists. */
  followOperand(): () => void {
    return this.deployments.on(() => {
      const operandExists = this.deployments.items().length > 0;
      for (const watch of this.inOperandNamespace)
        if (operandExists) watch.start();
        else watch.stop();
    });
  }

  stop(): void {
    for (const w of [...this.always(), ...this.inOperandNamespace]) w.stop();
  }
}
