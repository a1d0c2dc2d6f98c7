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

  constructor(@Inject(API_CONFIG) config: ApiConfig) {
    this.subscriber = createRedisClient(config.REDIS_URL, { maxRetriesPerRequest: null });
    this.publisher = createRedisClient(config.REDIS_URL, { maxRetriesPerRequest: null });
    this.channel = fleetEventsChannel(config.QUEUE_PREFIX);
  }

  async onModuleInit(): Promise<void> {
    this.subscriber.on('message', (_channel: string, message: string) => {
      const parsed = FleetEvent.safeParse(JSON.parse(message));
      if (parsed.success) void this.local.publish(parsed.data.type, parsed.data);
    });
    await this.subscriber.subscribe(this.channel);
  }

  async publish(event: FleetEvent): Promise<void> {
    await this.publisher.publish(this.channel, JSON.stringify(event));
  }

  iterator<T>(type: FleetEvent['type']): AsyncIterableIterator<T> {
    return this.local.asyncIterableIterator<T>(type);
  }

  onModuleDestroy(): void {
    this.subscriber.disconnect();
    this.publisher.disconnect();
  }
}
