import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import pg from 'pg';
import { Redis } from 'ioredis';

// Fault suites stop, restart or flush their servers; they get instances of their own on their
// own ports, so the shared PostgreSQL and Redis every other suite uses are never touched.

const run = promisify(execFile);
const SHARED_DATABASE_URL =
  process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/karpenter_fleet';

let pgBin: Promise<string> | undefined;
/**
 * The directory of the PostgreSQL programs (initdb, pg_ctl, pg_dump) of the same major version as
 * the shared server the set-up started, which the private servers copy their schema from: Debian
 * keeps each major version under /usr/lib/postgresql/<major>/bin. PG_BIN names another.
 */
export function postgresBinDir(): Promise<string> {
  pgBin ??= (async () => {
    if (process.env.PG_BIN) return process.env.PG_BIN;
    const client = new pg.Client({ connectionString: SHARED_DATABASE_URL });
    await client.connect();
    try {
      const { rows } = await client.query<{ server_version_num: string }>(
        'SHOW server_version_num',
      );
      const major = Math.floor(Number(rows[0]!.server_version_num) / 10_000);
      const dir = `/usr/lib/postgresql/${major}/bin`;
      if (!existsSync(join(dir, 'initdb'))) {
        throw new Error(
          `the shared PostgreSQL is version ${major}, but ${dir} has no initdb: set PG_BIN to its programs' directory`,
        );
      }
      return dir;
    } finally {
      await client.end();
    }
  })();
  return pgBin;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface PrivateRedis {
  url: string;
  port: number;
  /** SIGTERM (nothing to save), then wait for the process */
  stop(): Promise<void>;
}

/** The configuration the fleet's Redis runs with (deploy/redis/redis.conf). */
export const FLEET_REDIS_CONFIG = fileURLToPath(
  new URL('../../deploy/redis/redis.conf', import.meta.url),
);

/**
 * A redis-server of its own (no persistence) on a free port, or on `port` to bring back one
 * that was stopped (empty, as a restarted Redis without persistence is); `config` is a
 * configuration file it starts from.
 */
export async function startPrivateRedis(
  port?: number,
  config?: string,
  extraArgs: readonly string[] = [],
): Promise<PrivateRedis> {
  port ??= await freePort();
  const child: ChildProcess = spawn(
    'redis-server',
    [
      ...(config ? [config] : []),
      ...['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      ...extraArgs,
    ],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `redis://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  await until(async () => {
    const r = new Redis(url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    try {
      await r.connect();
      return (await r.ping()) === 'PONG';
    } finally {
      r.disconnect();
    }
  }, `redis-server on ${port}`).catch(async (err: unknown) => {
    await stop();
    throw err;
  });
  return { url, port, stop };
}

/**
 * A Redis Cluster of its own: `masters` redis-servers in cluster mode (the fleet's configuration,
 * no persistence, cluster-config-files in a temporary directory) on free ports, joined by
 * `redis-cli --cluster create`, with every slot assigned. `url` is a `redis-cluster://` URL
 * naming every node. For suites that flush or break their Redis (a Redis Cluster has only
 * database 0, so a flush reaches everything on it).
 */
export async function startPrivateRedisCluster(masters = 3): Promise<PrivateRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-redis-cluster-'));
  const nodes: PrivateRedis[] = [];
  const stopAll = async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < masters; i++) {
      const port = await freePort();
      nodes.push(
        await startPrivateRedis(port, FLEET_REDIS_CONFIG, [
          ...['--cluster-enabled', 'yes', '--dir', dir],
          ...['--cluster-config-file', `nodes-${port}.conf`, '--cluster-node-timeout', '5000'],
        ]),
      );
    }
    await run('redis-cli', [
      '--cluster',
      'create',
      ...nodes.map((n) => `127.0.0.1:${n.port}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    await until(async () => {
      const infos = await Promise.all(
        nodes.map(async (n) => {
          const r = new Redis(n.url, { maxRetriesPerRequest: 0, retryStrategy: () => null });
          try {
            return String(await r.call('CLUSTER', 'INFO'));
          } finally {
            r.disconnect();
          }
        }),
      );
      return infos.every(
        (info) =>
          info.includes('cluster_state:ok') && info.includes(`cluster_known_nodes:${masters}`),
      );
    }, 'the Redis Cluster to agree on its slots');
  } catch (err) {
    await stopAll();
    throw err;
  }
  const [seed, ...others] = nodes;
  return {
    url: `redis-cluster://127.0.0.1:${seed!.port}/?nodes=${others.map((n) => `127.0.0.1:${n.port}`).join(',')}`,
    port: seed!.port,
    stop: stopAll,
  };
}

/** `database` on the private server, holding the shared template's schema and migrations. */
async function copyTemplate(
  databaseUrl: (name: string) => string,
  database: string,
): Promise<void> {
  const shared = new URL(SHARED_DATABASE_URL);
  shared.pathname = `/${process.env.FLEET_TEST_TEMPLATE_DB ?? 'karpenter_fleet_template'}`;
  // The migrated schema (and migration history) of the shared template, copied, not re-migrated.
  const { stdout: dump } = await run(
    join(await postgresBinDir(), 'pg_dump'),
    ['--no-owner', '--no-acl', '--inserts', shared.toString()],
    {
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  const admin = new pg.Client({ connectionString: databaseUrl('postgres') });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${database}"`);
  } finally {
    await admin.end();
  }
  const target = new pg.Client({ connectionString: databaseUrl(database) });
  await target.connect();
  try {
    // psql meta-commands (`\restrict` in current pg_dump releases) are not SQL.
    await target.query(dump.replace(/^\\.*$/gm, ''));
  } finally {
    await target.end();
  }
}

export interface PrivatePostgres {
  /** base URL (database `postgres`); `databaseUrl(name)` for another database */
  url: string;
  port: number;
  databaseUrl(name: string): string;
  /** `pg_ctl restart -m fast`: every session ends, the server comes back on the same port */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A PostgreSQL cluster of its own (initdb in a temporary directory, trust auth, fsync off) with
 * `database` copied from the shared server's migrated template, so it holds the current schema.
 * As root the server runs as the `postgres` user, which initdb requires.
 */
export async function startPrivatePostgres(database = 'karpenter_fleet'): Promise<PrivatePostgres> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'fleet-pg-'));
  const data = join(dir, 'data');
  const asRoot = userInfo().uid === 0;
  const pgUser = asRoot ? 'postgres' : userInfo().username;
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const binDir = await postgresBinDir();
  const as = async (bin: string, args: string[]) =>
    asRoot
      ? run('runuser', ['-u', 'postgres', '--', join(binDir, bin), ...args])
      : run(join(binDir, bin), args);
  await as('initdb', ['-D', data, '-A', 'trust', '-U', pgUser, '--no-sync', '-E', 'UTF8']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c synchronous_commit=off`;
  const pgCtl = (action: string, ...extra: string[]) =>
    as('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', '-s', ...extra, action]);
  await pgCtl('start');
  const stop = async () => {
    await pgCtl('stop', '-m', 'immediate').catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  };
  const base = `postgresql://${pgUser}@127.0.0.1:${port}`;
  const databaseUrl = (name: string) => `${base}/${name}`;
  try {
    await copyTemplate(databaseUrl, database);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url: databaseUrl('postgres'),
    port,
    databaseUrl,
    async restart() {
      await pgCtl('restart', '-m', 'fast');
    },
    stop,
  };
}
