import { Watch, type KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { describeKubeError, type ClusterClient } from './cluster-client.js';
import { collectionPath, type ResourceIdentity } from '@fleet/contracts';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';
export type WatchHandler<T> = (type: WatchEventType, object: T) => void;

export interface ResourceWatchOptions {
  namespace?: string;
  fieldSelector?: string;
  labelSelector?: string;
  /** Longest wait between attempts while the kind is not served or the API server fails. */
  maxBackoffMs?: number;
  /**
   * The part of each object this watch's readers use, taken before it is cached or handed to a
   * handler (as controller-runtime's cache transforms): a watch over every Node or every pending
   * Pod otherwise holds whole objects (specs, images, managedFields) that nothing reads. It must
   * keep metadata.name, namespace and resourceVersion.
   */
  keep?: (object: KubernetesObject) => KubernetesObject;
}

/**
 * client-node aborts a watch that received nothing for its request timeout (30 s) with a
 * DOMException named TimeoutError (by name: a DOMException is not always this realm's Error).
 */
const inactivityTimeout = (err: unknown): boolean =>
  typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'TimeoutError';

const keyOf = (o: KubernetesObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

/**
 * List-then-watch of one kind with a local cache, the informer pattern: a 410 Expired (or any
 * broken stream) re-lists and turns the difference into ADDED/MODIFIED/DELETED events, so
 * handlers never miss a deletion. A kind that is not served yet (its CRD arrives later) is
 * retried with backoff instead of failing the sidecar.
 */
export class ResourceWatch<T extends KubernetesObject = KubernetesObject> {
  private readonly cache = new Map<string, T>();
  private readonly handlers = new Set<WatchHandler<T>>();
  private resourceVersion?: string;
  private abort?: AbortController;
  private timer?: NodeJS.Timeout;
  private stopped = true;
  private failures = 0;
  /**
   * Bumped by stop(): a list or watch begun before it (its request still in flight) must neither
   * deliver events nor outlive it, whatever start() does next.
   */
  private epoch = 0;
  private syncedOnce = false;
  private watching = false;
  private listing = false;
  private readonly syncWaiters: (() => void)[] = [];

  constructor(
    private readonly client: ClusterClient,
    private readonly watch: Watch,
    readonly kind: ResourceIdentity,
    private readonly log: Logger,
    readonly options: ResourceWatchOptions = {},
  ) {}

  private typed(object: KubernetesObject): T {
    const kept = this.options.keep ? this.options.keep(object) : object;
    return { ...kept, apiVersion: this.kind.apiVersion, kind: this.kind.kind } as T;
  }

  on(handler: WatchHandler<T>): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    void this.relist();
  }

  stop(): void {
    this.stopped = true;
    this.epoch++;
    this.watching = false;
    clearTimeout(this.timer);
    this.abort?.abort();
    this.abort = undefined;
  }

  /**
   * Retries now when the watch is waiting out a backoff (e.g. right after the sidecar installed
   * the CRD this watch was waiting for).
   */
  nudge(): void {
    if (this.stopped || this.watching) return;
    clearTimeout(this.timer);
    this.failures = 0;
    void this.relist();
  }

  /** The cached objects, as of the last event. */
  items(): T[] {
    return [...this.cache.values()];
  }

  get(name: string, namespace?: string): T | undefined {
    return this.cache.get(`${namespace ?? ''}/${name}`);
  }

  /** Whether the cache reflects at least one successful list. */
  get synced(): boolean {
    return this.syncedOnce;
  }

  /** Resolves once the first list has filled the cache. */
  whenSynced(): Promise<void> {
    if (this.syncedOnce) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  private emit(type: WatchEventType, object: T): void {
    for (const handler of this.handlers) {
      try {
        handler(type, object);
      } catch (err) {
        this.log.error({ err: String(err), kind: this.kind.kind }, 'watch handler failed');
      }
    }
  }

  private async relist(): Promise<void> {
    if (this.stopped || this.listing) return;
    this.listing = true;
    const epoch = this.epoch;
    try {
      await this.listAndWatch(epoch);
    } finally {
      this.listing = false;
    }
    // Stopped and started again while this list was in flight: that start found us listing.
    if (epoch !== this.epoch && !this.stopped) void this.relist();
  }

  private async listAndWatch(epoch: number): Promise<void> {
    let items: T[];
    try {
      const { namespace, fieldSelector, labelSelector } = this.options;
      // The collection by discovery, as client-node's KubernetesObjectApi found it: a kind not
      // served yet is a 404 from discovery, where a list would be refused (403) by RBAC first.
      const path = await this.client.collectionPathOf(
        this.kind.apiVersion,
        this.kind.kind,
        namespace,
      );
      const list = await this.client.rest.list<T>(path, { fieldSelector, labelSelector });
      items = list.items.map((o) => this.typed(o));
      this.resourceVersion = list.resourceVersion;
    } catch (err) {
      if (epoch === this.epoch) this.retry(`list failed: ${describeKubeError(err)}`);
      return;
    }
    if (this.stopped || epoch !== this.epoch) return;
    const seen = new Set<string>();
    for (const object of items) {
      const key = keyOf(object);
      seen.add(key);
      const before = this.cache.get(key);
      this.cache.set(key, object);
      if (!before) this.emit('ADDED', object);
      else if (before.metadata?.resourceVersion !== object.metadata?.resourceVersion)
        this.emit('MODIFIED', object);
    }
    for (const [key, object] of [...this.cache]) {
      if (seen.has(key)) continue;
      this.cache.delete(key);
      this.emit('DELETED', object);
    }
    if (!this.syncedOnce) {
      this.syncedOnce = true;
      for (const resolve of this.syncWaiters.splice(0)) resolve();
    }
    await this.startWatch(epoch);
  }

  private async startWatch(epoch: number): Promise<void> {
    if (this.stopped || epoch !== this.epoch) return;
    let expired = false;
    const path = collectionPath(this.kind, this.options.namespace);
    this.watching = true;
    try {
      const controller = await this.watch.watch(
        path,
        {
          resourceVersion: this.resourceVersion,
          allowWatchBookmarks: true,
          ...(this.options.fieldSelector ? { fieldSelector: this.options.fieldSelector } : {}),
          ...(this.options.labelSelector ? { labelSelector: this.options.labelSelector } : {}),
        },
        (phase: string, raw: unknown) => {
          if (epoch !== this.epoch) return;
          const object = raw as T & { code?: number };
          if (phase === 'ERROR') {
            expired = true;
            this.abort?.abort();
            return;
          }
          const rv = object.metadata?.resourceVersion;
          if (rv) this.resourceVersion = rv;
          if (phase === 'BOOKMARK') return;
          this.failures = 0;
          const typed = this.typed(object);
          const key = keyOf(typed);
          if (phase === 'DELETED') {
            this.cache.delete(key);
            this.emit('DELETED', typed);
          } else if (phase === 'ADDED' || phase === 'MODIFIED') {
            const existed = this.cache.has(key);
            this.cache.set(key, typed);
            this.emit(existed ? 'MODIFIED' : 'ADDED', typed);
          }
        },
        (err: unknown) => {
          if (epoch !== this.epoch) return;
          this.watching = false;
          if (this.stopped) return;
          if (expired || (err && !inactivityTimeout(err))) {
            // 410 Expired or a broken stream: the cache may have missed events, list again.
            this.retry(expired ? 'watch expired' : `watch ended: ${String(err)}`, expired);
          } else {
            // The server closed a healthy watch (its timeout), or client-node gave up on a quiet
            // one (30 s without an event or bookmark): nothing was missed, so resume from the
            // last resourceVersion — a new watch, never a list, as client-go's reflector does.
            // Were that version compacted away, the server answers 410 and we list then.
            void this.startWatch(epoch);
          }
        },
      );
      if (epoch !== this.epoch) controller.abort();
      else this.abort = controller;
    } catch (err) {
      if (epoch !== this.epoch) return;
      this.watching = false;
      this.retry(`watch failed: ${describeKubeError(err)}`);
    }
  }

  private retry(why: string, immediate = false): void {
    if (this.stopped) return;
    this.failures++;
    const max = this.options.maxBackoffMs ?? 10_000;
    const delay = immediate ? 0 : Math.min(max, 250 * 2 ** Math.min(this.failures - 1, 8));
    if (this.failures === 1 || this.failures % 10 === 0)
      this.log.debug({ kind: this.kind.kind, why, delay }, 'watch retrying');
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.relist(), delay);
  }
}
