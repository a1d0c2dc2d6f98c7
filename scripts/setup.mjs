#!/usr/bin/env node
// Idempotent fresh-machine set-up shared by `npm run demo`, `npm test`, `npm run bench` and CI:
// dependencies, PostgreSQL, Redis, Chromium, databases, migrations, the generated Prisma client.
// Every step checks first and acts only when something is missing.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { ensureUpstreamBinaries } from './upstream-binaries.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const log = (msg) => console.log(`[setup] ${msg}`);

const DATABASE_URL =
  process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/karpenter_fleet';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/**
 * The local three-master Redis Cluster the Redis Cluster suites and bench run against
 * (docs/DESIGN.md § Redis key layout): `redis-cluster://` names a seed and `nodes=` the others.
 */
const REDIS_CLUSTER_URL =
  process.env.REDIS_CLUSTER_URL ??
  'redis-cluster://127.0.0.1:7000/?nodes=127.0.0.1:7001,127.0.0.1:7002';
/** Tests clone this database per suite (CREATE DATABASE ... TEMPLATE), so it is migrated once. */
const TEMPLATE_DB = process.env.FLEET_TEST_TEMPLATE_DB ?? 'karpenter_fleet_template';

function run(cmd, args, opts = {}) {
  execFileSync(cmd, args, { stdio: 'inherit', cwd: root, ...opts });
}
function has(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}
function portOpen(host, port, timeoutMs = 500) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
async function waitForPort(host, port, what, seconds = 30) {
  for (let i = 0; i < seconds * 4; i++) {
    if (await portOpen(host, port)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what} did not start listening on ${host}:${port} within ${seconds}s`);
}
let aptUpdated = false;
function aptInstall(...pkgs) {
  if (!isRoot) {
    throw new Error(
      `Debian package${pkgs.length > 1 ? 's' : ''} ${pkgs.join(', ')} not installed, and the set-up ` +
        `installs packages only when it runs as root: run \`sudo apt-get install -y ${pkgs.join(' ')}\` ` +
        `(or the set-up as root), then the command again`,
    );
  }
  if (!aptUpdated) {
    run('apt-get', ['update', '-qq']);
    aptUpdated = true;
  }
  run('apt-get', ['install', '-y', '-qq', ...pkgs], {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}

// node_modules is current when it was installed, completely, from this very lock file: the
// lock's hash is written beside it after a successful `npm ci` (mtimes lie after a checkout or an
// interrupted install).
function ensureDependencies() {
  const marker = join(root, 'node_modules', '.karpenter-fleet-lock-sha256');
  const lockHash = createHash('sha256')
    .update(readFileSync(join(root, 'package-lock.json')))
    .digest('hex');
  if (existsSync(marker) && readFileSync(marker, 'utf8') === lockHash) return;
  log('installing npm dependencies (npm ci)');
  run('npm', ['ci', '--no-audit', '--no-fund']);
  writeFileSync(marker, lockHash);
}

async function ensurePostgres() {
  const { hostname, port } = new URL(DATABASE_URL);
  const pgPort = Number(port || 5432);
  if (await portOpen(hostname, pgPort)) return;
  if (!['127.0.0.1', 'localhost'].includes(hostname)) {
    throw new Error(`PostgreSQL at ${hostname}:${pgPort} is not reachable (DATABASE_URL)`);
  }
  if (!has('pg_ctlcluster')) {
    log('installing PostgreSQL');
    aptInstall('postgresql');
  }
  // The newest installed major version (numerically: 9.6 < 15 < 16).
  const version = readdirSync('/etc/postgresql')
    .sort((a, b) => Number.parseFloat(a) - Number.parseFloat(b))
    .at(-1);
  // A fresh Debian cluster asks for passwords over TCP; local development and CI use trust.
  const hba = `/etc/postgresql/${version}/main/pg_hba.conf`;
  run('sh', [
    '-c',
    `grep -q '^host all all 127.0.0.1/32 trust' ${hba} || sed -i '1i host all all 127.0.0.1/32 trust\\nhost all all ::1/128 trust' ${hba}`,
  ]);
  log(`starting PostgreSQL ${version}`);
  run('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', 'start']);
  await waitForPort(hostname, pgPort, 'PostgreSQL');
}

async function ensureRedis() {
  const { hostname, port } = new URL(REDIS_URL);
  const redisPort = Number(port || 6379);
  if (await portOpen(hostname, redisPort)) return;
  if (!has('redis-server')) {
    log('installing Redis');
    aptInstall('redis-server');
  }
  log('starting Redis');
  run('redis-server', [
    // The settings the fleet's Redis needs (noeviction, memory and value bounds).
    join(root, 'deploy', 'redis', 'redis.conf'),
    '--daemonize',
    'yes',
    '--bind',
    '127.0.0.1',
    '--port',
    String(redisPort),
    '--save',
    '',
    '--appendonly',
    'no',
    '--logfile',
    '/tmp/karpenter-fleet-redis.log',
  ]);
  await waitForPort(hostname, redisPort, 'Redis');
}

function redisCli(port, ...args) {
  const res = spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], {
    encoding: 'utf8',
    timeout: 10_000,
  });
  return res.status === 0 ? res.stdout : undefined;
}

/**
 * A local Redis Cluster of three masters (no replicas) from Debian's redis-server in cluster
 * mode, keeping nothing on disk (no RDB, no AOF; each node's cluster-config-file under /tmp).
 * Reused when every node answers and the cluster covers all slots with these three masters;
 * otherwise its nodes are shut down and it is created anew (a half-made or stale cluster cannot
 * be repaired reliably, and it holds no data worth keeping).
 */
async function ensureRedisCluster() {
  const url = new URL(REDIS_CLUSTER_URL);
  const ports = [url.port, ...(url.searchParams.get('nodes') ?? '').split(',')]
    .filter(Boolean)
    .map((node) => Number(node.split(':').at(-1)));
  const host = url.hostname;
  if (!['127.0.0.1', 'localhost'].includes(host)) return; // someone else's cluster
  const healthy = () =>
    ports.every((port) => {
      const info = redisCli(port, 'CLUSTER', 'INFO') ?? '';
      return (
        info.includes('cluster_state:ok') &&
        info.includes('cluster_slots_assigned:16384') &&
        info.includes(`cluster_known_nodes:${ports.length}`)
      );
    });
  if (healthy()) return;
  const dir = '/tmp/karpenter-fleet-redis-cluster';
  for (const port of ports) redisCli(port, 'SHUTDOWN', 'NOSAVE');
  for (const port of ports) {
    for (let i = 0; i < 40 && (await portOpen(host, port)); i++)
      await new Promise((r) => setTimeout(r, 250));
  }
  log(`starting a three-master Redis Cluster on ports ${ports.join(', ')}`);
  run('rm', ['-rf', dir]);
  run('mkdir', ['-p', dir]);
  for (const port of ports) {
    run('redis-server', [
      join(root, 'deploy', 'redis', 'redis.conf'),
      ...['--daemonize', 'yes', '--bind', '127.0.0.1', '--port', String(port)],
      ...['--save', '', '--appendonly', 'no', '--dir', dir],
      ...['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`],
      ...['--cluster-node-timeout', '5000', '--logfile', join(dir, `${port}.log`)],
    ]);
  }
  for (const port of ports) await waitForPort(host, port, `Redis Cluster node ${port}`);
  run(
    'redis-cli',
    [
      '--cluster',
      'create',
      ...ports.map((port) => `${host}:${port}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ],
    { stdio: 'ignore' },
  );
  for (let i = 0; i < 120 && !healthy(); i++) await new Promise((r) => setTimeout(r, 250));
  if (!healthy())
    throw new Error(`the Redis Cluster on ports ${ports.join(', ')} did not become ready`);
}

async function ensureDatabase(url, name) {
  const { default: pg } = await import('pg');
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) {
      log(`creating database ${name}`);
      await client.query(`CREATE DATABASE "${name}"`);
    }
  } finally {
    await client.end();
  }
  const target = new URL(url);
  target.pathname = `/${name}`;
  return target.toString();
}

async function pendingMigrations(url) {
  const { default: pg } = await import('pg');
  const wanted = readdirSync(join(root, 'prisma/migrations'), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL`,
    );
    const applied = new Set(rows.map((r) => r.migration_name));
    return wanted.filter((name) => !applied.has(name));
  } catch {
    return wanted; // no _prisma_migrations table yet
  } finally {
    await client.end();
  }
}

async function migrate(url) {
  // The Prisma CLI takes seconds to start; skip it when every migration is already applied.
  const pending = await pendingMigrations(url);
  if (pending.length === 0) return;
  log(`applying ${pending.join(', ')} to ${new URL(url).pathname.slice(1)}`);
  execFileSync(join(root, 'node_modules', '.bin', 'prisma'), ['migrate', 'deploy'], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: url, PRISMA_HIDE_UPDATE_MESSAGE: '1' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/**
 * The console's browser tests drive Debian's Chromium through playwright-core (never a browser
 * download: `npx playwright install` needs the internet). Where CHROMIUM_PATH names another
 * Chromium, that one is used and nothing is installed.
 */
function ensureChromium() {
  if (process.env.CHROMIUM_PATH) return;
  if (existsSync('/usr/lib/chromium/chromium') || has('chromium')) return;
  log('installing Chromium (for the console browser tests)');
  aptInstall('chromium');
}

/**
 * The monitoring suite checks deploy/monitoring's alerting rules with promtool (`check rules`,
 * `test rules`), which Debian ships in its `prometheus` package. PROMTOOL names another one.
 */
function ensurePromtool() {
  if (process.env.PROMTOOL || has('promtool')) return;
  log('installing promtool (Debian package prometheus, for the alerting rules tests)');
  aptInstall('prometheus');
}

/**
 * `npm run bench` loads the API with wrk (Debian's package): an efficient generator in a process
 * of its own, so the numbers are the server's and not the load loop's.
 */
function ensureWrk() {
  if (process.env.WRK || has('wrk')) return;
  log('installing wrk (the HTTP load generator of the benchmarks)');
  aptInstall('wrk');
}

function generateClient() {
  const generated = join(root, 'libs/database/src/generated/prisma/client.ts');
  const schema = join(root, 'prisma/schema.prisma');
  if (existsSync(generated) && statSync(generated).mtimeMs >= statSync(schema).mtimeMs) return;
  log('generating the Prisma client');
  execFileSync(join(root, 'node_modules', '.bin', 'prisma'), ['generate'], {
    cwd: root,
    env: { ...process.env, DATABASE_URL },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/**
 * The pinned upstream binaries (test/upstream) each command needs; the set-up builds only those.
 * `npm run setup` with no purpose prepares for the test suite.
 */
const UPSTREAM_BINARIES_FOR = {
  test: [
    'kubectl',
    'etcd',
    'kube-apiserver',
    'kube-controller-manager',
    'kube-scheduler',
    'karpenter-provider-aws',
  ],
  // The demo prints a kubectl command for its emulated clusters (issue 47): the pinned kubectl,
  // not an older one the machine may carry (Debian's is 1.20).
  demo: ['kubectl'],
  bench: [],
};

/** Runs one set-up step and prints how long it took (CI's log shows where a cold run went). */
async function step(name, fn) {
  const started = Date.now();
  await fn();
  const seconds = (Date.now() - started) / 1000;
  log(`${name}: ${seconds < 10 ? seconds.toFixed(1) : Math.round(seconds)} s`);
}

async function main() {
  const purpose = process.argv[2] ?? 'test';
  if (!(purpose in UPSTREAM_BINARIES_FOR)) {
    throw new Error(
      `usage: node scripts/setup.mjs [${Object.keys(UPSTREAM_BINARIES_FOR).join('|')}] (got ${purpose})`,
    );
  }
  const started = Date.now();
  await step('npm dependencies', ensureDependencies);
  await step('PostgreSQL', ensurePostgres);
  await step('Redis', ensureRedis);
  await step('Redis Cluster', ensureRedisCluster);
  await step('Chromium, promtool, wrk', () => {
    ensureChromium();
    ensurePromtool();
    ensureWrk();
  });
  await step('Prisma client', generateClient);
  await step('databases and migrations', async () => {
    const mainDb = new URL(DATABASE_URL).pathname.slice(1);
    await migrate(await ensureDatabase(DATABASE_URL, mainDb));
    await migrate(await ensureDatabase(DATABASE_URL, TEMPLATE_DB));
  });
  const binaries = UPSTREAM_BINARIES_FOR[purpose];
  if (binaries.length > 0) {
    await step(`upstream binaries (${binaries.join(', ')})`, () =>
      ensureUpstreamBinaries(binaries, log),
    );
  }
  log(`ready for ${purpose} in ${Math.round((Date.now() - started) / 1000)} s`);
}

main().catch((err) => {
  console.error(`[setup] ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
