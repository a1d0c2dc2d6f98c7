import {
  NODECLASS_ENFORCER_FIELD_MANAGER,
  type CloudProvider,
  type KubeObject,
} from '@fleet/cloud-provider';
import type { Logger } from 'pino';
import { describeKubeError, type ClusterClient } from '../kube/cluster-client.js';
import type { ResourceWatch, WatchEventType } from '../kube/resource-watch.js';

/** What the controller keeps while Karpenter is enabled: the cluster's facts and the default. */
export interface NodeClassTarget {
  /** What the driver's discovery found, as the provider reads it. */
  infra: unknown;
  /** The default NodeClass as the last order rendered it (overrides merged, validated). */
  defaultNodeClass: KubeObject;
}

export interface NodeClassControllerDeps {
  cluster: ClusterClient;
  provider: CloudProvider<unknown, unknown>;
  nodeClasses: ResourceWatch;
  log: Logger;
}

/**
 * Watch-driven NodeClass upkeep, as karpenter-operator does it: the default NodeClass comes
 * back when deleted, and amiFamily/amiSelectorTerms/userData are put back on every NodeClass
 * that drifts from the cluster (RHCOS boots only with the cluster's AMI and Ignition). Idle while
 * Karpenter is disabled or being disabled (target undefined).
 */
export class NodeClassController {
  private target?: NodeClassTarget;
  private readonly queue = new Map<string, WatchEventType>();
  private running?: Promise<void>;
  private unsubscribe?: () => void;
  /** Corrections applied since start, for tests and logs. */
  enforced = 0;
  recreated = 0;

  constructor(private readonly deps: NodeClassControllerDeps) {}

  start(): void {
    this.unsubscribe = this.deps.nodeClasses.on((type, object) => {
      const name = object.metadata?.name;
      if (!name || !this.target) return;
      this.queue.set(name, type);
      this.drain();
    });
  }

  stop(): void {
    this.unsubscribe?.();
    this.target = undefined;
  }

  /** Called after every order: what to keep, or undefined to leave NodeClasses alone. */
  setTarget(target: NodeClassTarget | undefined): void {
    this.target = target;
    if (!target) {
      this.queue.clear();
      return;
    }
    // A new target may change the enforced fields: re-check every NodeClass in the cache.
    for (const o of this.deps.nodeClasses.items()) {
      if (o.metadata?.name) this.queue.set(o.metadata.name, 'MODIFIED');
    }
    this.drain();
  }

  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private drain(): void {
    if (this.running) return;
    this.running = (async () => {
      while (this.queue.size > 0 && this.target) {
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
      }
      this.running = undefined;
    })();
  }

  private async handle(name: string, type: WatchEventType, target: NodeClassTarget): Promise<void> {
    const live = this.deps.nodeClasses.get(name) as KubeObject | undefined;
    if (type === 'DELETED' || !live) {
      if (name !== this.deps.provider.defaultNodeClassName) return;
      await this.deps.cluster.apply(target.defaultNodeClass);
      this.recreated++;
      this.deps.log.info({ nodeClass: name }, 'default NodeClass recreated');
      return;
    }
    // A NodeClass on its way out keeps its spec; Karpenter's finalizer is draining it.
    if ((live.metadata as { deletionTimestamp?: string }).deletionTimestamp) return;
    const { patch, drifted } = this.deps.provider.enforceNodeClass(live, target.infra);
    if (drifted.length === 0) return;
    await this.deps.cluster.apply(patch, NODECLASS_ENFORCER_FIELD_MANAGER);
    this.enforced++;
    this.deps.log.info(
      { nodeClass: name, drifted },
      'NodeClass fields put back in line with the cluster',
    );
  }
}
