import { fleetEventsChannel, type RedisClient } from '@fleet/contracts';

/**
 * Publishes `cluster-changed` for ingested reports in one pipeline per interval, one event per
 * cluster however many reports it sent meanwhile: subscribers want freshness, not every report,
 * and the ingest path must not wait on a Redis round trip per report.
 */
export class ChangeEvents {
  private readonly pending = new Set<string>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
    intervalMs = 100,
  ) {
    this.channel = fleetEventsChannel(prefix);
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  private readonly channel: string;

  changed(clusterId: string): void {
    this.pending.add(clusterId);
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const pipeline = this.redis.pipeline();
    for (const clusterId of this.pending) {
      pipeline.publish(this.channel, JSON.stringify({ type: 'cluster-changed', clusterId }));
    }
    this.pending.clear();
    await pipeline.exec().catch(() => undefined); // a lost event costs freshness, never state
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
