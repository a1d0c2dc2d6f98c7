/**
 * Hosts many of the sidecar's real OrderConsumers in one process for the connections bench: each
 * holds exactly the Redis connections a sidecar's consumer holds (its own connection and BullMQ's
 * blocking one), applies nothing and records each order it takes in `bench:consumed`.
 *
 * argv: redisUrl prefix firstIndex count. Prints "ready <ms>" once every consumer is listening.
 */
import { Redis } from 'ioredis';
import pino from 'pino';
import { OrderConsumer } from '../../apps/sidecar/src/orders/order-consumer.js';
import type { ReconcileResult } from '../../apps/sidecar/src/reconcile/outcome.js';
import { benchClusterId } from './connections-ids.js';

const [redisUrl, prefix, first, count] = process.argv.slice(2);
if (!redisUrl || !prefix || !first || !count) throw new Error('usage: redisUrl prefix first count');
const log = pino({ level: 'silent' });
const recorder = new Redis(redisUrl, { maxRetriesPerRequest: null });
const consumers: OrderConsumer[] = [];
const connections: Redis[] = [];
const started = performance.now();

const starts: Promise<void>[] = [];
for (let i = Number(first); i < Number(first) + Number(count); i++) {
  const clusterId = benchClusterId(i);
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  connections.push(connection);
  const consumer = new OrderConsumer({
    clusterId,
    connection,
    prefix,
    log,
    apply: (): Promise<ReconcileResult> =>
      Promise.resolve({ applied: 0, pruned: 0, requeue: false, conditions: [] }),
    report: async () => {
      await recorder.lpush('bench:consumed', `${clusterId} ${Date.now()}`);
    },
  });
  consumers.push(consumer);
  starts.push(consumer.start());
  // Connect in waves: a burst of thousands of SYNs at once overflows the listen backlog.
  if (starts.length % 200 === 0) await Promise.all(starts.splice(0));
}
await Promise.all(starts);
console.log(`ready ${(performance.now() - started).toFixed(0)}`);

process.on('SIGTERM', () => {
  void (async () => {
    await Promise.allSettled(consumers.map((c) => c.close()));
    for (const c of connections) c.disconnect();
    recorder.disconnect();
    process.exit(0);
  })();
});
