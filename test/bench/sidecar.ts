/**
 * The sidecar on one cluster, as a real process: how fast a Karpenter node's CSRs are approved
 * after they appear, and what the process costs at rest (RSS, API-server requests per minute:
 * watch-driven means close to none).
 */
import { CONTRACT_VERSION, sidecarQueueName, type ReconcileOrder } from '@fleet/contracts';
import { OPERAND_NAME, OPERAND_NAMESPACE } from '@fleet/cloud-provider';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startEmulatedCluster } from '../support/emulated-cluster.js';
import { CRDS_DIR } from '../support/fixtures.js';
import { NodeLaunchSimulator } from '../support/node-launch-simulator.js';
import { eventually, freePort } from '../support/processes.js';
import { imageSidecar, startSidecarProcessWith } from '../support/sidecar-process.js';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { testQueuePrefix } from '../support/database.js';
import { cpuSeconds } from './load-generator.js';
import { percentile } from './stats.js';

export interface SidecarBenchResult {
  nodes: number;
  approvalMs: { p50: number; p99: number };
  restRssMb: number;
  restHeapMb: number;
  /** Same run, same process settings: Node with the sidecar's libraries loaded, doing nothing. */
  floorRssMb: number;
  restRequestsPerMinute: number;
  /**
   * CPU seconds of the sidecar process over its whole run (start-up, its order with the CRDs it
   * installs, the node launches and the rest): what a process setting saves in memory must not
   * cost it here.
   */
  cpuSeconds: number;
}

/**
 * What the sidecar cannot go below on this runtime: a Node process started with the image's
 * settings that loads the libraries it is built on (client-node, the EC2 client, BullMQ, ioredis,
 * pino, zod) and then does nothing, measured after 10 s.
 */
async function floorRssMb(): Promise<number> {
  const script =
    "for (const m of ['@kubernetes/client-node', '@aws-sdk/client-ec2', 'bullmq', 'ioredis', 'pino', 'zod']) await import(m); setInterval(() => {}, 60_000);";
  const image = imageSidecar();
  const v8Flags = image.args.filter((a) => a.startsWith('-'));
  const child = spawn(process.execPath, [...v8Flags, '--input-type=module', '-e', script], {
    cwd: process.cwd(),
    env: { ...process.env, NODE_OPTIONS: '', ...image.env },
    stdio: 'ignore',
  });
  try {
    await new Promise((r) => setTimeout(r, 10_000));
    const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
    if (!kb) throw new Error('no VmRSS for the floor process');
    return Number(kb) / 1024;
  } finally {
    child.kill('SIGKILL');
  }
}

async function heapMb(opsUrl: string): Promise<number> {
  const text = await (await fetch(`${opsUrl}/metrics`)).text();
  const match = /^nodejs_heap_size_used_bytes(?:\{[^}]*\})? (\d+(?:\.\d+)?)/m.exec(text);
  if (!match) throw new Error('sidecar /metrics has no nodejs_heap_size_used_bytes');
  return Number(match[1]) / 2 ** 20;
}

async function rssMb(opsUrl: string): Promise<number> {
  const text = await (await fetch(`${opsUrl}/metrics`)).text();
  if (process.env.BENCH_DEBUG)
    console.log(
      text
        .split('\n')
        .filter((l) => /heap_size|resident|external/.test(l) && !l.startsWith('#'))
        .join('\n'),
    );
  const match = /^process_resident_memory_bytes(?:\{[^}]*\})? (\d+(?:\.\d+)?)/m.exec(text);
  if (!match) throw new Error('sidecar /metrics has no process_resident_memory_bytes');
  return Number(match[1]) / 2 ** 20;
}

export async function benchSidecar(nodes = 40, restSeconds = 30): Promise<SidecarBenchResult> {
  const cluster = await startEmulatedCluster();
  const prefix = testQueuePrefix();
  const clusterId = randomUUID();
  const opsPort = await freePort();
  // A stand-in for the fleet API's report endpoint: accepts every report, as a healthy fleet does.
  const reports = createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      res.writeHead(202, { 'content-type': 'application/json' }).end('{"accepted":true}'),
    );
  });
  await new Promise<void>((resolve) => reports.listen(0, '127.0.0.1', resolve));
  const reportsUrl = `http://127.0.0.1:${(reports.address() as AddressInfo).port}`;
  const sidecar = startSidecarProcessWith(
    {
      ...cluster.sidecarEnv,
      CLUSTER_ID: clusterId,
      REPORT_TOKEN: 'bench-report-token-0123456789',
      API_URL: reportsUrl,
      QUEUE_PREFIX: prefix,
      CRD_DIR: CRDS_DIR,
      LOG_LEVEL: process.env.BENCH_SIDECAR_LOG_LEVEL ?? 'error',
      OPS_PORT: String(opsPort),
      // The approval cap (default 60/min) is a safety brake; here we measure speed, not the brake.
      CSR_APPROVALS_PER_MINUTE: '10000',
      ...(process.env.BENCH_SIDECAR_NODE_OPTIONS !== undefined
        ? { NODE_OPTIONS: process.env.BENCH_SIDECAR_NODE_OPTIONS }
        : {}),
    },
    'sidecar',
  );
  const redis = new Redis({ maxRetriesPerRequest: null });
  const queue = new Queue<ReconcileOrder>(sidecarQueueName(clusterId), {
    connection: redis,
    prefix,
  });
  const sim = new NodeLaunchSimulator({ kube: cluster.kube, ec2: cluster.ec2 });
  try {
    await eventually(
      () => fetch(`http://127.0.0.1:${opsPort}/readyz`).then((r) => (r.ok ? true : undefined)),
      {
        timeoutMs: 60_000,
        what: 'the sidecar',
      },
    );
    await queue.add(
      'order',
      {
        contractVersion: CONTRACT_VERSION,
        clusterId,
        generation: 1,
        platform: 'AWS',
        topology: 'STANDALONE',
        spec: {
          enabled: true,
          paused: false,
          clusterAutoscalerMode: 'DISABLE',
          logLevel: 'info',
          featureGates: { Drift: true },
          nodeClassOverrides: {},
          nodePools: [
            {
              name: 'general',
              spec: {
                template: {
                  spec: {
                    nodeClassRef: {
                      group: 'karpenter.k8s.aws',
                      kind: 'EC2NodeClass',
                      name: 'default',
                    },
                    requirements: [
                      { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
                    ],
                  },
                },
              },
            },
          ],
        },
      },
      { jobId: 'generation-1' },
    );
    await eventually(() => cluster.kube.get('karpenter.sh/v1', 'NodePool', 'general'), {
      timeoutMs: 60_000,
      what: 'the NodePool',
    });
    cluster.kube.setDeploymentAvailable(OPERAND_NAMESPACE, OPERAND_NAME);
    sim.start();
    // Karpenter's NodeClass Ready: DISABLE then removes the Cluster Autoscaler and the sidecar
    // stops re-checking every 5 s (without it, "at rest" would measure that wait).
    sim.markNodeClassReady('default');
    await eventually(
      () =>
        cluster.kube.get('autoscaling.openshift.io/v1', 'ClusterAutoscaler', 'default')
          ? undefined
          : true,
      { timeoutMs: 60_000, what: 'the Cluster Autoscaler removed' },
    );
    const samples: number[] = [];
    for (let i = 0; i < nodes; i++) {
      const node = await sim.launch('general');
      samples.push(node.clientApprovalMs, node.servingApprovalMs);
    }
    sim.stop();
    // At rest: nothing changes on the cluster; count what the sidecar still asks of it.
    await new Promise((r) => setTimeout(r, 3000));
    const restStart = Date.now();
    const before = cluster.kube.requestCount((e) => e.verb !== 'watch');
    await new Promise((r) => setTimeout(r, restSeconds * 1000));
    const requests = cluster.kube.requestCount((e) => e.verb !== 'watch') - before;
    if (process.env.BENCH_DEBUG) {
      const status = await readFile(`/proc/${sidecar.child.pid}/status`, 'utf8');
      console.log(
        status
          .split('\n')
          .filter((l) => /^(VmRSS|RssAnon|RssFile|RssShmem)/.test(l))
          .join(', '),
      );
      // Where the resident memory is: the largest mappings ([heap] is glibc's main arena; V8's
      // pages and malloc's other arenas are anonymous mappings).
      const smaps = await readFile(`/proc/${sidecar.child.pid}/smaps`, 'utf8');
      const mappings = smaps.split(/\n(?=[0-9a-f]+-[0-9a-f]+ )/).map((m) => {
        const [range = '', , , , , path] = m.split('\n')[0]!.split(/\s+/);
        const [from = 0, to = 0] = range.split('-').map((x) => parseInt(x, 16));
        const rssKb = Number(/^Rss:\s+(\d+)/m.exec(m)?.[1] ?? 0);
        return { path: path || '[anon]', sizeKb: (to - from) / 1024, rssKb };
      });
      // Grouped by what they are: a file, or anonymous mappings of one size (V8's pages are 256 kB).
      const groups = new Map<string, { count: number; rssKb: number }>();
      for (const m of mappings) {
        const key = m.path === '[anon]' ? `anonymous ${m.sizeKb} kB` : m.path;
        const group = groups.get(key) ?? { count: 0, rssKb: 0 };
        groups.set(key, { count: group.count + 1, rssKb: group.rssKb + m.rssKb });
      }
      console.log(
        [...groups]
          .sort((a, b) => b[1].rssKb - a[1].rssKb)
          .slice(0, 15)
          .map(([key, g]) => `${g.rssKb} kB resident in ${g.count} × ${key}`)
          .join('\n'),
      );
      const recent = cluster.kube.requests.slice(-60).filter((e) => e.verb !== 'watch');
      console.log(
        recent
          .map(
            (e) => `${e.time - restStart} ${e.method} ${e.path}?${e.query} ${e.verb} ${e.status}`,
          )
          .join('\n'),
      );
      console.log(sidecar.output().split('\n').slice(-60).join('\n'));
    }
    return {
      nodes,
      approvalMs: { p50: percentile(samples, 50), p99: percentile(samples, 99) },
      restRssMb: await rssMb(`http://127.0.0.1:${opsPort}`),
      restHeapMb: await heapMb(`http://127.0.0.1:${opsPort}`),
      floorRssMb: await floorRssMb(),
      restRequestsPerMinute: (requests / restSeconds) * 60,
      cpuSeconds: cpuSeconds(sidecar.child.pid!),
    };
  } finally {
    sim.stop();
    await sidecar.stop();
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    redis.disconnect();
    await cluster.stop();
    reports.close();
  }
}
