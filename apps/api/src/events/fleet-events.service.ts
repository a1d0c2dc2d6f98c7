import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
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

  constructor(@Inject(API_CONFIG) config: ApiConfig) {
    this.channel = fleetEventsChannel(config.QUEUE_PREFIX);
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
      if (parsed.success) void this.local.publish(parsed.data.type, parsed.data);
    });
    // Pub/sub is at-most-once: whatever was published while the subscription was down is gone.
    // ioredis subscribes again on reconnect, right after 'ready'; this SUBSCRIBE is answered after
    // that one, so the gap is over when it is, and only then are the listeners told.
    let subscribed = false;
    this.subscriber.on('ready', () => {
      if (!subscribed) return;
      const gapEnded = () => {
        for (const listener of this.gapListeners) listener();
      };
      this.subscriber.subscribe(this.channel).then(gapEnded, gapEnded);
    });
    await this.subscriber.subscribe(this.channel);
    subscribed = true;
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
    try {
      await this.publisher.publish(this.channel, JSON.stringify(event));
    } catch (err) {
      void this.local.publish(event.type, event);
      throw err;
    }
  }

  iterator<T>(type: FleetEvent['type']): AsyncIterableIterator<T> {
    return this.local.asyncIterableIterator<T>(type);
  }

  onModuleDestroy(): void {
    this.subscriber.disconnect();
    this.publisher.disconnect();
  }
}
