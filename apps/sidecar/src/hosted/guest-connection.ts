import { readFileSync } from 'node:fs';
import { KubeConfig, Watch, type KubernetesObject } from '@kubernetes/client-node';
import type { ResourceIdentity } from '@fleet/contracts';
import {
  OPENSHIFT_EC2_NODE_CLASS,
  OWNED_BY_SELECTOR,
  guestOwnedKinds,
  servedOpenshiftEc2NodeClass,
  type OwnedKind,
} from '@fleet/cloud-provider';
import type { Logger } from 'pino';
import type { ApiServers } from '../kube/api-servers.js';
import { ClusterClient } from '../kube/cluster-client.js';
import { ResourceWatch } from '../kube/resource-watch.js';
import { OwnedObjects } from '../reconcile/owned-objects.js';

export interface GuestConnectionOptions {
  apiServers: ApiServers;
  /** The mounted guest kubeconfig; unset: the API servers' `workload` target. */
  guestKubeconfigPath?: string;
  log: Logger;
  /** Every event of the watched fleet objects in the guest (drift). */
  onEvent(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: KubernetesObject): void;
}

/**
 * A hosted sidecar's hold on the guest: the client, rebuilt when the mounted kubeconfig is
 * rewritten (rotation); the watches of what the fleet keeps there, which follow the client and
 * the served OpenshiftEC2NodeClass version; and the pipeline's owned objects over both.
 */
export class GuestConnection {
  private current?: { content: string; client: ClusterClient };
  /** The OpenshiftEC2NodeClass version the guest serves (discoverNodeClass). */
  private served: ResourceIdentity = OPENSHIFT_EC2_NODE_CLASS;
  private watches: ResourceWatch[] = [];
  private watchesFor?: ClusterClient;
  /** Their handlers, dropped with them when a rotation rebuilds them. */
  private readonly offs: (() => void)[] = [];
  private started = false;

  constructor(private readonly options: GuestConnectionOptions) {}

  get nodeClass(): ResourceIdentity {
    return this.served;
  }

  start(): void {
    this.started = true;
    try {
      this.client();
    } catch (err) {
      // No guest kubeconfig yet: the first reconcile reports it.
      this.options.log.warn({ err: String(err) }, 'guest kubeconfig not readable yet');
    }
    for (const w of this.watches) w.start();
  }

  stop(): void {
    this.started = false;
    for (const off of this.offs.splice(0)) off();
    for (const w of this.watches) w.stop();
  }

  /** The CRDs are served now: the watches need not wait out their backoff. */
  nudge(): void {
    for (const w of this.watches) w.nudge();
  }

  /** The guest's client, rebuilt when the mounted kubeconfig was rewritten (rotation). */
  client(): ClusterClient {
    const { guestKubeconfigPath: path, apiServers, log } = this.options;
    if (!path) {
      const client = apiServers.client('workload');
      this.watch(client, apiServers.kubeConfig('workload'));
      return client;
    }
    let content: string;
    try {
      content = readFileSync(path, 'utf8');
    } catch (err) {
      // Mid-rewrite or briefly absent: keep the client built from the last good content.
      if (this.current) return this.current.client;
      throw err;
    }
    if (this.current?.content === content) return this.current.client;
    const config = new KubeConfig();
    config.loadFromString(content);
    if (this.current) log.info({ path }, 'guest kubeconfig rotated; guest client rebuilt');
    this.current = { content, client: new ClusterClient(config, apiServers.timeoutMs) };
    this.watch(this.current.client, config);
    return this.current.client;
  }

  /**
   * Which OpenshiftEC2NodeClass version the guest serves (HyperShift builds before its v1
   * promotion serve v1beta1 only), from discovery; the watches follow it. False while the CRD is
   * not installed.
   */
  async discoverNodeClass(): Promise<boolean> {
    const guest = this.client();
    const served = servedOpenshiftEc2NodeClass(
      await guest.servedVersions(OPENSHIFT_EC2_NODE_CLASS.group),
    );
    if (!served) return false;
    if (served.version !== this.served.version) {
      this.options.log.info({ version: served.version }, 'guest serves OpenshiftEC2NodeClass');
      this.served = served;
      this.watchesFor = undefined;
      this.watch(guest, guest.kubeConfig);
    }
    return true;
  }

  /**
   * The reconcile pipeline's owned objects (list and prune by the fleet's label, a kind not
   * served skipped) over the guest's current client and its served NodeClass version.
   */
  owned(): OwnedObjects {
    const guest = this.client();
    const kinds = guestOwnedKinds(this.served);
    // No operand namespace: HyperShift runs the operand.
    return new OwnedObjects(
      { client: () => guest },
      { ownedKinds: () => kinds, operandNamespace: '' },
    );
  }

  /** The fleet's NodeClass kind as the pipeline's owned objects list it. */
  ownedNodeClassKind(): OwnedKind {
    return guestOwnedKinds(this.served)[0]!;
  }

  /**
   * The guest's watches follow its client: a rotated kubeconfig rebuilds the client, and the
   * watches with it (the old credentials stop working).
   */
  private watch(client: ClusterClient, config: KubeConfig): void {
    if (this.watchesFor === client) return;
    for (const off of this.offs.splice(0)) off();
    for (const w of this.watches) w.stop();
    const watch = new Watch(config);
    this.watches = guestOwnedKinds(this.served).map(
      (kind) =>
        new ResourceWatch(client, watch, kind, this.options.log, {
          labelSelector: OWNED_BY_SELECTOR,
          // HyperShift installs the Karpenter CRDs in the guest; until then the kind is not served.
          maxBackoffMs: 5_000,
        }),
    );
    this.watchesFor = client;
    for (const w of this.watches) {
      this.offs.push(w.on((type, object) => this.options.onEvent(type, object)));
      if (this.started) w.start();
    }
  }
}
