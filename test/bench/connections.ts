/**
 * Connections are a limit too: how many Redis connections one sidecar's order consumer holds,
 * and what 10,000 of them (real OrderConsumers, hosted several thousand per process) cost one
 * redis-server: memory, CPU at rest, and the delivery of an order while they are all connected.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CONTRACT_VERSION,
  sidecarQueueName,
  type KarpenterDesiredState,
  type ReconcileOrder,
} from '@fleet/contracts';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pino from 'pino';
import { OrderConsumer } from '../../apps/sidecar/src/orders/order-consumer.js';
import { eventually, freePort } from '../support/processes.js';
import { benchClusterId } from './connections-ids.js';
import { meterCpu } from './load-generator.js';
import { percentile } from './stats.js';

/**
 * Descriptors a process may open: redis-server needs one per client, so the bench raises its own
 * and the consumer hosts' soft limits to the hard limit (a container may not raise the hard one:
 * 20,000 here).
 */
const FILE_LIMIT = Number(execFileSync('sh', ['-c', 'ulimit -Hn'], { encoding: 'utf8' }).trim());
/** What redis-server keeps for itself (listening sockets, log, the bench's own clients). */
const RESERVED_DESCRIPTORS = 64;

export interface ConnectionsBenchResult {
  perSidecar: number;
  /** Consumers asked for; `consumers` is lower when the descriptor limit cannot hold them all. */
  requested: number;
  fileLimit: number;
  consumers: number;
  hosts: number;
  connected: number;
  connectSeconds: number;
  redisUsedMemoryMb: number;
  redisRssMb: number;
  /** Redis CPU with every consumer connected and idle (BullMQ's blocking waits and timers). */
  redisIdleCores: number;
  hostsRssMb: number;
  delivered: number;
  deliveryMs: { p50: number; p99: number };
}

const SPEC: KarpenterDesiredState = {
  enabled: false,
  paused: false,
  clusterAutoscalerMode: 'KEEP',
  logLevel: 'info',
  featureGates: {},
  nodePools: [],
  nodeClassOverrides: {},
};

const info = async (redis: Redis, section: string, field: string) => {
  const text = await redis.info(section);
  return Number(new RegExp(`^${field}:(\\S+)`, 'm').exec(text)?.[1] ?? NaN);
};

/** VmRSS from /proc, in MB; 0 once the process is gone. */
const rssMb = (pid: number) => {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
};

export async function benchConnections({
  consumers: requested = 10_000,
  hosts = 4,
  deliveries = 200,
  idleSeconds = 20,
} = {}): Promise<ConnectionsBenchResult> {
  const port = await freePort();
  const redisProcess = spawn(
    'sh',
    [
      '-c',
      `ulimit -n ${FILE_LIMIT} && exec redis-server --port ${port} --bind 127.0.0.1 --save '' --appendonly no --maxclients ${FILE_LIMIT - RESERVED_DESCRIPTORS} --tcp-backlog 4096`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let redisError = '';
  redisProcess.stderr?.on('data', (d: Buffer) => (redisError += d.toString()));
  const redisExited = new Promise<never>((_, reject) =>
    redisProcess.once('exit', (code) =>
      reject(new Error(`redis-server exited ${code}: ${redisError.trim()}`)),
    ),
  );
  redisExited.catch(() => undefined);
  const url = `redis://127.0.0.1:${port}`;
  // Commands wait while the server starts: ioredis reconnects until it answers.
  const admin = new Redis(url, { maxRetriesPerRequest: null });
  admin.on('error', () => undefined);
  const children: ChildProcess[] = [];
  const prefix = 'bench';
  try {
    await Promise.race([admin.ping(), redisExited]);
    const clients = async () => info(admin, 'clients', 'connected_clients');

    // One sidecar: its connection plus what BullMQ opens beside it.
    const before = await clients();
    const connection = new Redis(url, { maxRetriesPerRequest: null });
    const one = new OrderConsumer({
      clusterId: benchClusterId(requested + 1),
      connection,
      prefix,
      log: pino({ level: 'silent' }),
      apply: () => Promise.resolve({ applied: 0, pruned: 0, requeue: false, conditions: [] }),
      report: () => Promise.resolve(),
    });
    await one.start();
    const perSidecar = (await clients()) - before;
    await one.close();
    connection.disconnect();
    const consumers = Math.min(
      requested,
      Math.floor((FILE_LIMIT - RESERVED_DESCRIPTORS) / Math.max(1, perSidecar)) - 1,
    );

    // Many: real consumers in `hosts` processes, each allowed enough descriptors.
    const started = performance.now();
    const per = Math.ceil(consumers / hosts);
    const ready = Array.from({ length: hosts }, (_, h) => {
      const first = h * per;
      const count = Math.max(0, Math.min(per, consumers - first));
      const child = spawn(
        'sh',
        [
          '-c',
          `ulimit -n ${FILE_LIMIT} && exec "$0" "$@"`,
          process.execPath,
          join(process.cwd(), 'dist/test/bench/consumer-host.js'),
          url,
          prefix,
          String(first),
          String(count),
        ],
        { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } },
      );
      children.push(child);
      let output = '';
      return new Promise<void>((resolve, reject) => {
        child.stdout?.on('data', (d: Buffer) => {
          output += d.toString();
          if (output.includes('ready ')) resolve();
        });
        child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
        child.once('exit', (code) =>
          reject(new Error(`consumer host ${h} exited ${code}:\n${output}`)),
        );
      });
    });
    await Promise.race([Promise.all(ready), redisExited]);
    const connectSeconds = (performance.now() - started) / 1000;
    const connected = await clients();

    // At rest with everyone connected: what idle consumers cost Redis.
    const redisPid = redisProcess.pid!;
    const idle = meterCpu({ redis: () => [redisPid] });
    await new Promise((r) => setTimeout(r, idleSeconds * 1000));
    const redisIdleCores = idle.stop().redis?.cores ?? 0;

    // Orders to a sample of the clusters while all of them listen.
    const recorder = new Redis(url, { maxRetriesPerRequest: null });
    await recorder.del('bench:consumed');
    const sample = Array.from({ length: deliveries }, (_, k) =>
      benchClusterId(Math.floor((k * consumers) / deliveries)),
    );
    const sentAt = new Map<string, number>();
    for (const clusterId of sample) {
      const queue = new Queue<ReconcileOrder>(sidecarQueueName(clusterId), {
        connection: recorder,
        prefix,
      });
      sentAt.set(clusterId, Date.now());
      await queue.add('order', {
        contractVersion: CONTRACT_VERSION,
        clusterId,
        generation: 1,
        platform: 'AWS',
        topology: 'STANDALONE',
        spec: SPEC,
      });
      await queue.close();
    }
    await eventually(
      async () => ((await recorder.llen('bench:consumed')) >= deliveries ? true : undefined),
      { timeoutMs: 60_000, what: 'every sampled order consumed' },
    );
    const latencies = (await recorder.lrange('bench:consumed', 0, -1)).map((line) => {
      const [clusterId, at] = line.split(' ');
      return Number(at) - (sentAt.get(clusterId!) ?? Number(at));
    });
    recorder.disconnect();
    return {
      perSidecar,
      requested,
      fileLimit: FILE_LIMIT,
      consumers,
      hosts,
      connected,
      connectSeconds,
      redisUsedMemoryMb: (await info(admin, 'memory', 'used_memory')) / 2 ** 20,
      redisRssMb: rssMb(redisPid),
      redisIdleCores,
      hostsRssMb: children.reduce((sum, c) => sum + rssMb(c.pid!), 0),
      delivered: latencies.length,
      deliveryMs: { p50: percentile(latencies, 50), p99: percentile(latencies, 99) },
    };
  } finally {
    for (const child of children) child.kill('SIGKILL');
    admin.disconnect();
    redisProcess.kill('SIGTERM');
  }
}
