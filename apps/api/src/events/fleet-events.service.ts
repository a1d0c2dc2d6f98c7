import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import {
  fleetEventsChannel,
  FleetEvent,
  createRedisClient,
  type RedisClient,
} from '@fleet/contracts';
import { PubSub } from 'graphql-subscriptions';
import { API_CONFIG, type ApiConfig } from '../config.js';

/**
 * Fleet events travel over Redis pub/sub, so a change ingested by any worker reaches the
 * subscribers of every API replica; each replica fans them out in process.
 */
@Injectable()
export class FleetEventsService implements OnModuleInit, OnModuleDestroy {
  readonly local = new PubSub();
  private readonly subscriber: RedisClient;
  private readonly publisher: RedisClient;
  private readonly channel: string;
  private readonly gapListeners: (() => void)[] = [];
  /** This replica's own subscription checks come back carrying this. */
  private readonly replica = randomUUID();
  private readonly checkEveryMs: number;
  private lastCheckHeard = Date.now();
  private gapSuspected = false;
  private checkTimer: NodeJS.Timeout | undefined;

  constructor(@Inject(API_CONFIG) config: ApiConfig) {
    this.channel = fleetEventsChannel(config.QUEUE_PREFIX);
    this.checkEveryMs = config.EVENTS_CHECK_SECONDS * 1000;
    // Named, so CLIENT LIST tells an operator which connection carries the fleet's events.
    this.subscriber = createRedisClient(config.REDIS_URL, {
      maxRetriesPerRequest: null,
      connectionName: `fleet-api-events:${this.channel}`,
    });
    this.publisher = createRedisClient(config.REDIS_URL, { maxRetriesPerRequest: null });
  }

  async onModuleInit(): Promise<void> {
    this.subscriber.on('message', (_channel: string, message: string) => {
      const parsed = FleetEvent.safeParse(JSON.parse(message));
      if (!parsed.success) return;
      if (parsed.data.type === 'subscription-check') {
        if (parsed.data.replica === this.replica) this.checkHeard();
        return;
      }
      void this.local.publish(parsed.data.type, parsed.data);
    });
    // Pub/sub is at-most-once: whatever was published while the subscription was down is gone.
    // ioredis subscribes again on reconnect, right after 'ready'; this SUBSCRIBE is answered after
    // that one, so the gap is over when it is, and only then are the listeners told.
    let subscribed = false;
    this.subscriber.on('ready', () => {
      if (!subscribed) return;
      const ended = () => this.gapEnded();
      this.subscriber.subscribe(this.channel).then(ended, ended);
    });
    await this.subscriber.subscribe(this.channel);
    subscribed = true;
    // A subscription can also go quiet without a reconnect: a half-open connection, or a Redis
    // Cluster moving its subscriber to another node. Each replica publishes a check to itself;
    // while its own checks do not come back, events may be lost, so the listeners are told at
    // every check until they do, and once more when they do.
    this.lastCheckHeard = Date.now();
    this.checkTimer = setInterval(() => {
      if (Date.now() - this.lastCheckHeard > 2.5 * this.checkEveryMs) {
        this.gapSuspected = true;
        this.gapEnded();
      }
      this.publisher
        .publish(
          this.channel,
          JSON.stringify({ type: 'subscription-check', replica: this.replica }),
        )
        .catch(() => undefined);
    }, this.checkEveryMs);
    this.checkTimer.unref();
  }

  private checkHeard(): void {
    this.lastCheckHeard = Date.now();
    if (this.gapSuspected) {
      this.gapSuspected = false;
      this.gapEnded();
    }
  }

  private gapEnded(): void {
    for (const listener of this.gapListeners) listener();
  }

  /**
   * Called after the subscription came back from a disconnect, during which events may have been
   * missed: a cache kept fresh by events must forget what they could have changed.
   */
  onGap(listener: () => void): void {
    this.gapListeners.push(listener);
  }

  /**
   * To every replica. If Redis refuses it, this replica still gets it (its own caches at least are
   * right) and the caller learns it failed.
   */
  async publish(event: FleetEvent): Promise<void> {
    // Dropping a cached credential twice is harmless, and this replica must not wait for Redis
    // (a publish to a Redis that is away is queued, not refused) to stop trusting an ended token.
    const idempotent = event.type === 'credentials-changed';
    if (idempotent) void this.local.publish(event.type, event);
    try {
      await this.publisher.publish(this.channel, JSON.stringify(event));
    } catch (err) {
      if (!idempotent) void this.local.publish(event.type, event);
      throw err;
    }
  }

  iterator<T>(type: FleetEvent['type']): AsyncIterableIterator<T> {
    return this.local.asyncIterableIterator<T>(type);
  }

  onModuleDestroy(): void {
    clearInterval(this.checkTimer);
    this.subscriber.disconnect();
    this.publisher.disconnect();
  }
}
