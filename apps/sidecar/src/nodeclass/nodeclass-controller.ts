import { compareCodeUnits } from '@fleet/contracts';
import type { KarpenterDesiredState } from '@fleet/contracts';
import {
  machineConfigPoolName,
  machineConfigReadiness,
  NODECLASS_ENFORCER_FIELD_MANAGER,
  NODECLASS_LABEL,
  NodeClassConfigError,
  OWNED_BY_SELECTOR,
  type CloudProvider,
  type KubeObject,
  type NodeClassConfigKind,
  type NodeClassConfigReason,
} from '@fleet/cloud-provider';
import type { Logger } from 'pino';
import { describeKubeError, isUnknownKind, type ClusterClient } from '../kube/cluster-client.js';
import type { ResourceWatch, WatchEventType } from '../kube/resource-watch.js';

/** What the controller keeps while Karpenter is enabled: the cluster's facts and the default. */
export interface NodeClassTarget {
  /** What the driver's discovery found, as the provider reads it. */
  infra: unknown;
  /** The default NodeClass as the last order rendered it (overrides merged, validated). */
  defaultNodeClass: KubeObject;
  /** The order's desired state: kubelet settings every NodeClass and its pool carry. */
  desired: KarpenterDesiredState;
}

/** A NodeClass that cannot get its MachineConfigPool, and why. */
export interface NodeClassProblem {
  nodeClass: string;
  reason: NodeClassConfigReason;
  message: string;
}

export interface NodeClassControllerDeps {
  cluster: ClusterClient;
  provider: CloudProvider<unknown, unknown>;
  nodeClasses: ResourceWatch;
  /** Nodes carrying the provider's NodeClass label: a pool stays while any of its nodes does. */
  nodes: ResourceWatch;
  /**
   * The NodeClasses' MachineConfigPools and KubeletConfigs, where the provider keeps them: the
   * launch gate opens only once the MCO has rendered a pool with its KubeletConfig, and closes
   * while the KubeletConfig reports Failure.
   */
  pools?: ResourceWatch;
  kubeletConfigs?: ResourceWatch;
  log: Logger;
  /** A NodeClass's problem appeared or went away. */
  onProblemsChange?: () => void;
}

/**
 * Watch-driven NodeClass upkeep, as karpenter-operator does it: every NodeClass (the default
 * and any user's) first gets what it needs on the cluster — on standalone OpenShift its own
 * MachineConfigPool `karpenter-<nodeclass>`, user-data Secret and KubeletConfig — then
 * amiFamily/amiSelectorTerms/userData/kubelet are put back on it when they drift (RHCOS boots
 * only with the cluster's AMI and its pool's Ignition pointer). The default NodeClass comes back
 * when deleted. A pool is pruned only once its NodeClass and every Node launched from it are
 * gone, whether Karpenter is enabled or not. NodeClass upkeep is idle while Karpenter is
 * disabled or being disabled (target undefined).
 */
export class NodeClassController {
  private target?: NodeClassTarget;
  private readonly queue = new Map<string, WatchEventType>();
  private pruneWanted = false;
  private awaitingSync = false;
  private running?: Promise<void>;
  private readonly offs: (() => void)[] = [];
  /** What was last applied per NodeClass, so a NodeClass's status updates write nothing. */
  private readonly applied = new Map<string, string>();
  private readonly problems = new Map<string, NodeClassProblem>();
  /** NodeClasses whose pool and pointer are in place: the launch gate lets their NodeClaims in. */
  private readonly launchable = new Set<string>();
  /** The last target, serialized: setTarget with the same one changes nothing. */
  private targetKey: string | undefined;
  /** What the launch gate's ConfigMap was last written with. */
  private launchableWritten?: string;
  /** Corrections applied since start, for tests and logs. */
  enforced = 0;
  recreated = 0;
  poolsPruned = 0;

  constructor(private readonly deps: NodeClassControllerDeps) {}

  start(): void {
    this.offs.push(
      this.deps.nodeClasses.on((type, object) => {
        const name = object.metadata?.name;
        if (!name) return;
        if (type === 'DELETED') this.pruneWanted = true;
        if (this.target) this.queue.set(name, type);
        this.drain();
      }),
      this.deps.nodes.on((type) => {
        if (type !== 'DELETED') return;
        this.pruneWanted = true;
        this.drain();
      }),
    );
    // The MCO's status on a pool or KubeletConfig may open or close its NodeClass's gate.
    for (const watch of [this.deps.pools, this.deps.kubeletConfigs]) {
      if (!watch) continue;
      this.offs.push(
        watch.on((_type, object) => {
          const nodeClass = object.metadata?.labels?.[NODECLASS_LABEL];
          if (!nodeClass || !this.target || !this.deps.nodeClasses.get(nodeClass)) return;
          if (!this.queue.has(nodeClass)) this.queue.set(nodeClass, 'MODIFIED');
          this.drain();
        }),
      );
    }
  }

  stop(): void {
    for (const off of this.offs.splice(0)) off();
    this.target = undefined;
  }

  /** NodeClasses that cannot get their pool, by name. */
  currentProblems(): NodeClassProblem[] {
    return [...this.problems.values()].sort((a, b) => compareCodeUnits(a.nodeClass, b.nodeClass));
  }

  private setProblem(name: string, problem: NodeClassProblem | undefined): void {
    const before = JSON.stringify(this.problems.get(name));
    if (problem) this.problems.set(name, problem);
    else this.problems.delete(name);
    if (JSON.stringify(problem) !== before) this.deps.onProblemsChange?.();
  }

  /** Called after every order: what to keep, or undefined to leave NodeClasses alone. */
  setTarget(target: NodeClassTarget | undefined): void {
    // Every reconcile and re-check sets the target; only a different one may change what is
    // rendered, so only then is everything applied again (an unchanged pool is never rewritten).
    const key = target === undefined ? undefined : JSON.stringify(target);
    const changed = key === undefined || key !== this.targetKey;
    this.targetKey = key;
    this.target = target;
    if (!changed) return;
    this.applied.clear();
    this.pruneWanted = true;
    if (!target) {
      // Disabling prunes the gate with the admission policies; Karpenter is going too.
      this.launchable.clear();
      this.launchableWritten = undefined;
      this.queue.clear();
      for (const name of [...this.problems.keys()]) this.setProblem(name, undefined);
      this.drain();
      return;
    }
    // A new target may change the enforced fields: re-check every NodeClass in the cache.
    for (const o of this.deps.nodeClasses.items()) {
      if (o.metadata?.name) this.queue.set(o.metadata.name, 'MODIFIED');
    }
    this.drain();
  }

  /**
   * Lets Karpenter launch from a NodeClass whose pool and pointer were just applied (the apply
   * phase does so for the default NodeClass, which it renders after its pool) once the MCO has
   * rendered its pool with its KubeletConfig; until then, and while that KubeletConfig reports
   * Failure, the gate stays closed (and the pool's or KubeletConfig's next status reopens the
   * question).
   */
  async allowLaunches(name: string): Promise<void> {
    const { pools, kubeletConfigs } = this.deps;
    if (pools && kubeletConfigs) {
      const poolName = machineConfigPoolName(name);
      const readiness = machineConfigReadiness(
        name,
        pools.get(poolName) as KubeObject | undefined,
        kubeletConfigs.get(poolName) as KubeObject | undefined,
      );
      if (!readiness.ready) {
        if (this.launchable.has(name))
          this.deps.log.info(
            { nodeClass: name, reason: readiness.reason },
            `launch gate closed: ${readiness.message}`,
          );
        // The gate first, then the report: what is reported is already in force.
        await this.holdLaunches(name);
      }
      this.setProblem(
        name,
        !readiness.ready && readiness.reason === 'KubeletConfigFailure'
          ? { nodeClass: name, reason: readiness.reason, message: readiness.message }
          : undefined,
      );
      if (!readiness.ready) return;
    }
    this.launchable.add(name);
    await this.writeLaunchable();
  }

  private async holdLaunches(name: string): Promise<void> {
    if (!this.launchable.delete(name)) return;
    await this.writeLaunchable();
  }

  /** The launch gate's ConfigMap, under the enforcer's field manager (it owns the keys). */
  private async writeLaunchable(): Promise<void> {
    const render = this.deps.provider.renderLaunchableNodeClasses?.bind(this.deps.provider);
    if (!render || !this.target) return;
    const names = [...this.launchable].sort();
    const key = names.join(',');
    if (key === this.launchableWritten) return;
    await this.deps.cluster.apply(render(names).object, NODECLASS_ENFORCER_FIELD_MANAGER);
    this.launchableWritten = key;
    this.deps.log.info({ launchable: names }, 'launch gate: NodeClasses Karpenter may launch from');
  }

  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private drain(): void {
    if (this.running) return;
    // Cleared in `finally`, never inside the loop: the loop may end before its first await.
    this.running = (async () => {
      for (;;) {
        if (this.queue.size > 0 && this.target) {
          const [name, type] = this.queue.entries().next().value as [string, WatchEventType];
          this.queue.delete(name);
          try {
            await this.handle(name, type, this.target);
          } catch (err) {
            this.deps.log.warn(
              { nodeClass: name, err: describeKubeError(err) },
              'NodeClass upkeep failed',
            );
          }
          continue;
        }
        if (!this.pruneWanted) break;
        const { nodeClasses, nodes } = this.deps;
        if (!nodeClasses.synced || !nodes.synced) {
          // An empty cache before the first list is not "no NodeClasses": prune once both are.
          if (!this.awaitingSync) {
            this.awaitingSync = true;
            void Promise.all([nodeClasses.whenSynced(), nodes.whenSynced()]).then(() => {
              this.awaitingSync = false;
              this.drain();
            });
          }
          break;
        }
        this.pruneWanted = false;
        try {
          await this.prunePools();
        } catch (err) {
          this.deps.log.warn({ err: describeKubeError(err) }, 'pruning MachineConfigPools failed');
        }
      }
    })().finally(() => {
      this.running = undefined;
    });
  }

  /**
   * Applies what the NodeClass needs before it can launch anything (its pool), skipping what
   * was already applied for this target. A NodeClass that cannot get it is recorded as a problem.
   */
  private async ensureConfig(name: string, target: NodeClassTarget): Promise<boolean> {
    let objects;
    try {
      objects = this.deps.provider.renderNodeClassConfig(target.infra, name, target.desired);
    } catch (err) {
      if (!(err instanceof NodeClassConfigError)) throw err;
      this.setProblem(name, { nodeClass: name, reason: err.reason, message: err.message });
      return false;
    }
    const key = JSON.stringify(objects);
    if (this.applied.get(name) !== key) {
      for (const { object } of objects) await this.deps.cluster.apply(object);
      await this.removeUnrendered(
        name,
        objects.map(({ object }) => object),
      );
      this.applied.set(name, key);
    }
    // Rendering worked; what the MCO says of the KubeletConfig is allowLaunches' to judge.
    if (this.problems.get(name)?.reason !== 'KubeletConfigFailure')
      this.setProblem(name, undefined);
    return true;
  }

  /** A NodeClass's objects the desired state no longer asks for (its KubeletConfig, say). */
  private async removeUnrendered(name: string, rendered: KubeObject[]): Promise<void> {
    const { cluster, provider } = this.deps;
    for (const kind of provider.nodeClassConfigKinds().filter((k) => !k.nameFor)) {
      if (rendered.some((o) => o.apiVersion === kind.apiVersion && o.kind === kind.kind)) continue;
      let live: KubeObject[];
      try {
        live = await cluster.list<KubeObject>(kind.apiVersion, kind.kind, {
          labelSelector: `${OWNED_BY_SELECTOR},${NODECLASS_LABEL}=${name}`,
        });
      } catch (err) {
        if (isUnknownKind(err)) continue;
        throw err;
      }
      for (const o of live) {
        await cluster.delete({
          apiVersion: kind.apiVersion,
          kind: kind.kind,
          name: o.metadata.name,
        });
      }
    }
  }

  /**
   * Deletes the per-NodeClass objects of every NodeClass that is gone and has no Node left:
   * which NodeClasses had some comes from the kinds the sidecar may list; a kind it may not
   * (the user-data Secret) is deleted by name, first, so a crash never strands it.
   */
  private async prunePools(): Promise<void> {
    const { nodeClasses, nodes, provider, cluster } = this.deps;
    const keep = new Set<string>();
    for (const o of nodeClasses.items()) if (o.metadata?.name) keep.add(o.metadata.name);
    for (const n of nodes.items()) {
      const value = n.metadata?.labels?.[provider.nodeClassLabel];
      if (value) keep.add(value);
    }
    // The default NodeClass keeps its pool while Karpenter is enabled, even between its
    // deletion and its re-creation.
    if (this.target) keep.add(provider.defaultNodeClassName);
    const kinds = provider.nodeClassConfigKinds();
    const stale: { kind: NodeClassConfigKind; name: string; owner: string }[] = [];
    for (const kind of kinds.filter((k) => !k.nameFor)) {
      let live: KubeObject[];
      try {
        live = await cluster.list<KubeObject>(kind.apiVersion, kind.kind, {
          labelSelector: `${OWNED_BY_SELECTOR},${NODECLASS_LABEL}`,
        });
      } catch (err) {
        if (isUnknownKind(err)) continue;
        throw err;
      }
      for (const o of live) {
        const owner = o.metadata.labels?.[NODECLASS_LABEL];
        if (owner && !keep.has(owner)) stale.push({ kind, name: o.metadata.name, owner });
      }
    }
    const owners = [...new Set(stale.map((s) => s.owner))].sort();
    for (const kind of kinds) {
      const nameFor = kind.nameFor;
      const targets = nameFor
        ? owners.flatMap((owner) =>
            (kind.namespaces ?? []).map((namespace) => ({
              owner,
              name: nameFor(owner),
              namespace,
            })),
          )
        : stale.filter((s) => s.kind === kind).map((s) => ({ ...s, namespace: undefined }));
      for (const { owner, name, namespace } of targets) {
        await cluster.delete({
          apiVersion: kind.apiVersion,
          kind: kind.kind,
          name,
          ...(namespace ? { namespace } : {}),
        });
        if (kind.kind === 'MachineConfigPool') this.poolsPruned++;
        this.deps.log.info(
          { nodeClass: owner, kind: kind.kind, name },
          'NodeClass and its Nodes are gone: its configuration is removed',
        );
      }
    }
    for (const owner of owners) {
      this.applied.delete(owner);
      this.setProblem(owner, undefined);
      await this.holdLaunches(owner);
    }
  }

  private async handle(name: string, type: WatchEventType, target: NodeClassTarget): Promise<void> {
    const live = this.deps.nodeClasses.get(name) as KubeObject | undefined;
    if (type === 'DELETED' || !live) {
      if (name !== this.deps.provider.defaultNodeClassName) {
        // A NodeClass that never got a pool has nothing to prune: its problem goes with it.
        this.setProblem(name, undefined);
        return this.holdLaunches(name);
      }
      if (!(await this.ensureConfig(name, target))) return this.holdLaunches(name);
      await this.deps.cluster.apply(target.defaultNodeClass);
      this.recreated++;
      this.deps.log.info({ nodeClass: name }, 'default NodeClass recreated');
      return this.allowLaunches(name);
    }
    // A NodeClass on its way out keeps its spec; Karpenter's finalizer is draining it.
    if ((live.metadata as { deletionTimestamp?: string }).deletionTimestamp)
      return this.holdLaunches(name);
    // The pool first: the user data put on the NodeClass below points at it. Until both are in
    // place the launch gate keeps Karpenter from launching anything from it.
    if (!(await this.ensureConfig(name, target))) return this.holdLaunches(name);
    const { patch, mergePatch, drifted } = this.deps.provider.enforceNodeClass(
      live,
      target.infra,
      target.desired,
    );
    if (drifted.length === 0) return this.allowLaunches(name);
    await this.deps.cluster.apply(patch, NODECLASS_ENFORCER_FIELD_MANAGER);
    if (mergePatch)
      await this.deps.cluster.mergePatch(mergePatch, NODECLASS_ENFORCER_FIELD_MANAGER);
    this.enforced++;
    this.deps.log.info(
      { nodeClass: name, drifted },
      'NodeClass fields put back in line with the cluster',
    );
    await this.allowLaunches(name);
  }
}
