// The images, without a container engine: the Containerfile's build steps run in a temporary
// copy of the repository (install, build, prune dev dependencies), then every deploy/ workload
// starts from the result as its manifest says (command, environment, mounts), under an arbitrary
// UID in group 0 as OpenShift's restricted-v2 SCC runs it, with nothing from this machine's
// environment and no way to write to the image. Each must find its CRDs and configuration.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

import {
  buildStages,
  createTestDatabase,
  deployWorkloads,
  eventually,
  freePort,
  graphqlClient,
  imageTarget,
  parseContainerfile,
  spawnProcess,
  testQueuePrefix,
  type ManifestContainer,
  type RunningProcess,
  type TestDatabase,
  type Workload,
} from '@fleet/testing';

import { startEmulatedCluster, type EmulatedCluster } from '../support/emulated-cluster.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** A UID from an OpenShift namespace's range, in group 0. */
const ARBITRARY_UID = 1_000_680_000;
const asRoot = process.getuid?.() === 0;
const LAYER_CACHE =
  process.env.FLEET_CONTAINER_LAYER_CACHE ??
  join(homedir(), '.cache', 'karpenter-fleet', 'container-layers');

const containerfile = parseContainerfile(readFileSync(join(ROOT, 'Containerfile'), 'utf8'));
const workloads = deployWorkloads();
const workload = (file: string, name: string): { w: Workload; c: ManifestContainer } => {
  const w = workloads.find((x) => x.file === file && x.name === name);
  if (!w?.containers[0]) throw new Error(`no workload ${name} in deploy/${file}`);
  return { w, c: w.containers[0] };
};

let scratch: string;
let imageRoot: string;
let database: TestDatabase;
let cluster: EmulatedCluster;
const running: RunningProcess[] = [];
let apiUrl: string;
let buildLog = '';

/** A Secret's data, as the cluster would hold it for the pod. */
let secrets: Record<string, Record<string, string>>;

/**
 * Starts a workload's container from the image: the manifest's command (or the image's CMD),
 * its env with secrets resolved, its mounts from `mounts`, ports rewritten to free ones.
 */
async function startContainer(
  { w, c }: { w: Workload; c: ManifestContainer },
  mounts: Record<string, string> = {},
): Promise<{ process: RunningProcess; ports: Record<string, number> }> {
  const target = imageTarget(c.image);
  const image = containerfile.image(target);
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/' };
  Object.assign(env, image.env);
  for (const from of c.envFrom ?? []) {
    const secret = secrets[from.secretRef?.name ?? ''];
    if (!secret) throw new Error(`${w.name}: no Secret ${from.secretRef?.name}`);
    Object.assign(env, secret);
  }
  const ports: Record<string, number> = {};
  for (const e of c.env ?? []) {
    const ref = e.valueFrom?.secretKeyRef;
    // The downward API fields deploy/ uses, as the kubelet fills them in.
    const field: Record<string, string | undefined> = {
      'metadata.namespace': w.namespace,
      'spec.serviceAccountName': w.serviceAccountName,
    };
    const fieldPath = e.valueFrom?.fieldRef?.fieldPath;
    let value = ref ? secrets[ref.name]?.[ref.key] : fieldPath ? field[fieldPath] : e.value;
    // An optional key the Secret does not hold leaves the variable unset, as the kubelet does.
    if (value === undefined && ref?.optional) continue;
    if (value === undefined) throw new Error(`${w.name}: ${e.name} has no value`);
    if (/_PORT$/.test(e.name)) {
      ports[e.name] = await freePort();
      value = String(ports[e.name]);
    }
    for (const [mountPath, hostPath] of Object.entries(mounts)) {
      if (value.startsWith(`${mountPath}/`)) value = hostPath + value.slice(mountPath.length);
    }
    env[e.name] = value;
  }
  const argv = [...(c.command ?? image.cmd ?? []), ...(c.args ?? [])];
  const [command, ...args] = argv[0] === 'node' ? [process.execPath, ...argv.slice(1)] : argv;
  const child = spawnProcess({
    command: command!,
    args,
    env,
    cwd: join(imageRoot, image.workdir),
    ...(asRoot ? { uid: ARBITRARY_UID, gid: 0 } : {}),
    name: `${w.kind}/${w.name}`,
  });
  running.push(child);
  return { process: child, ports };
}

async function httpStatus(url: string): Promise<number | undefined> {
  try {
    return (await fetch(url)).status;
  } catch {
    return undefined;
  }
}

async function ready(child: RunningProcess, url: string): Promise<void> {
  await eventually(
    async () => {
      if (child.child.exitCode !== null) throw new Error(`exited: ${child.output()}`);
      return (await httpStatus(url)) === 200 ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 200, what: `${url} to answer 200` },
  ).catch((err: unknown) => {
    throw new Error(`${String(err)}\n${child.output()}`);
  });
}

describe('the images deploy/ runs', () => {
  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'fleet-image-'));
    // The arbitrary UID must reach the image's files, as every user can in a real image.
    chmodSync(scratch, 0o755);
    const started = Date.now();
    const roots = buildStages(containerfile, ['api', 'worker', 'sidecar'], {
      context: ROOT,
      scratch,
      log: (line) => (buildLog += `${line}\n`),
      onStep: (step, ms) => (buildLog += `[${(ms / 1000).toFixed(1)} s] ${step}\n`),
      // npm ci's layer is kept between runs as a builder keeps it (keyed by the lock file and
      // everything before it): installing 1 GB of packages was most of this suite's time.
      layerCache: LAYER_CACHE === 'off' ? undefined : { dir: LAYER_CACHE, runs: /^npm ci\b/ },
    });
    imageRoot = roots.api!;
    // The three are built on the same runtime stage: one file system.
    expect(roots).toEqual({ api: imageRoot, worker: imageRoot, sidecar: imageRoot });
    buildLog += `built in ${Date.now() - started} ms\n`;

    [database, cluster] = await Promise.all([
      createTestDatabase({ empty: true }),
      startEmulatedCluster(),
    ]);
    const prefix = testQueuePrefix();
    secrets = {
      'karpenter-fleet': {
        DATABASE_URL: database.url,
        REDIS_URL,
        FLEET_BOOTSTRAP_TOKEN: randomBytes(24).toString('hex'),
      },
    };
    // The standalone sidecar would use its service account; here its kubeconfig comes with the
    // registration Secret, readable by the arbitrary UID like a mounted Secret.
    const mountDir = join(scratch, 'mounts', 'guest-kubeconfig');
    mkdirSync(mountDir, { recursive: true });
    chmodSync(join(scratch, 'mounts'), 0o755);
    chmodSync(mountDir, 0o755);
    writeFileSync(join(mountDir, 'kubeconfig'), readFileSync(cluster.kubeconfigPath), {
      mode: 0o644,
    });
    secrets['karpenter-fleet-sidecar'] = {
      ...cluster.sidecarEnv,
      KUBECONFIG: join(mountDir, 'kubeconfig'),
      CLUSTER_ID: randomUUID(),
      REPORT_TOKEN: randomBytes(24).toString('hex'),
      REDIS_URL,
      QUEUE_PREFIX: prefix,
      API_URL: 'http://127.0.0.1:1',
    };
  }, 900_000);

  afterAll(async () => {
    // Kept for reading after a slow or failed run: each step's output and duration.
    mkdirSync(join(ROOT, 'test-artifacts', 'container'), { recursive: true });
    writeFileSync(join(ROOT, 'test-artifacts', 'container', 'build.log'), buildLog);
    await Promise.all(running.map((p) => p.stop()));
    await Promise.all([database?.drop(), cluster?.stop()]);
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('holds only production dependencies and the upstream CRDs beside the compiled code', () => {
    const runtime = join(imageRoot, containerfile.image('api').workdir);
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
    };
    const present = (name: string) =>
      existsSync(join(runtime, 'node_modules', name, 'package.json'));
    // typescript stays: @nestjs/graphql and Prisma declare it as a peer.
    // The console ships as built files: React, PatternFly and Vite are build-time only.
    const devOnly = ['jest', 'eslint', 'prettier', '@swc/core', 'react', 'vite'];
    for (const name of devOnly) expect(manifest.devDependencies[name]).toBeDefined();
    expect({ devDependenciesShipped: devOnly.filter(present), log: buildLog.slice(-3000) }).toEqual(
      {
        devDependenciesShipped: [],
        log: buildLog.slice(-3000),
      },
    );
    expect(['prisma', '@kubernetes/client-node', 'bullmq'].filter((n) => !present(n))).toEqual([]);
    const upstream = join(runtime, 'dist/libs/crd-schema/upstream');
    expect(readFileSync(join(upstream, 'karpenter/karpenter.sh_nodepools.yaml'), 'utf8')).toContain(
      'name: nodepools.karpenter.sh',
    );
    expect(buildLog).toContain('RUN npm prune --omit=dev');
  });

  it('migration Job: prisma migrate deploy brings an empty database to the schema', async () => {
    const { process: job } = await startContainer(
      workload('base/api.yaml', 'karpenter-fleet-migrate'),
    );
    const exit = await job.exited;
    expect({ exit, output: exit.code === 0 ? '' : job.output() }).toEqual({
      exit: { code: 0, signal: null },
      output: '',
    });
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM _prisma_migrations WHERE finished_at IS NOT NULL',
      );
      const migrations = (await import('node:fs')).readdirSync(join(ROOT, 'prisma/migrations'), {
        withFileTypes: true,
      });
      expect(rows[0]?.n).toBe(migrations.filter((d) => d.isDirectory()).length);
    } finally {
      await client.end();
    }
  });

  it('API: starts, validates against its CRDs, and is ready', async () => {
    const { process: api, ports } = await startContainer(
      workload('base/api.yaml', 'karpenter-fleet-api'),
    );
    apiUrl = `http://127.0.0.1:${ports.API_PORT}`;
    await ready(api, `${apiUrl}/readyz`);
    // A NodePool the upstream CRD refuses is refused, naming the field: the API read its CRDs.
    const gql = graphqlClient(`${apiUrl}/graphql`, {
      authorization: `Bearer ${secrets['karpenter-fleet']!.FLEET_BOOTSTRAP_TOKEN}`,
    });
    const registered = await gql<{ registerCluster: { cluster: { id: string } } }>(
      `mutation { registerCluster(input: { name: "image-check", platform: AWS, topology: STANDALONE,
        region: "us-east-1" }) { cluster { id } } }`,
    );
    const clusterId = registered.data?.registerCluster.cluster.id;
    expect(clusterId).toEqual(expect.any(String));
    const refused = await gql(
      `mutation($id: ID!, $spec: JSON!) { upsertNodePool(clusterId: $id,
        input: { name: "general", spec: $spec }) { id } }`,
      {
        id: clusterId,
        spec: {
          disruption: { consolidationPolicy: 'WhenIdle', consolidateAfter: '30s' },
          template: {
            spec: {
              nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
              requirements: [],
            },
          },
        },
      },
    );
    expect(refused.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(refused.errors?.[0]?.message).toContain('consolidationPolicy');

    // The web console travels in dist/apps and the API serves it, a client route included.
    const page = await fetch(`${apiUrl}/clusters`);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    const script = /<script type="module" crossorigin src="([^"]+)"/.exec(html)?.[1];
    expect(script).toMatch(/^\/assets\/.+\.js$/);
    const bundle = await fetch(`${apiUrl}${script}`);
    expect({ status: bundle.status, type: bundle.headers.get('content-type') }).toEqual({
      status: 200,
      type: 'text/javascript; charset=utf-8',
    });
  });

  it('worker: starts and is ready', async () => {
    const { process: worker, ports } = await startContainer(
      workload('base/worker.yaml', 'karpenter-fleet-worker'),
    );
    await ready(worker, `http://127.0.0.1:${ports.OPS_PORT}/readyz`);
  });

  it.each([
    ['standalone', 'sidecar/standalone/sidecar.yaml'],
    ['hosted', 'sidecar/hosted/sidecar.yaml'],
  ])('sidecar (%s): loads its CRDs, reaches its cluster, and is ready', async (_, file) => {
    const mountDir = posix.dirname(secrets['karpenter-fleet-sidecar']!.KUBECONFIG!);
    const { process: sidecar, ports } = await startContainer(
      workload(file, 'karpenter-fleet-sidecar'),
      { '/etc/guest-kubeconfig': mountDir },
    );
    await ready(sidecar, `http://127.0.0.1:${ports.OPS_PORT}/readyz`);
    await sidecar.stop();
  });
});
