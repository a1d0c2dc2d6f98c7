import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fleetEventsChannel, sidecarQueueName } from '@fleet/contracts';
import { createPrismaClient, type PrismaClient } from '@fleet/database';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createTestDatabase, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import { hashToken } from '../../apps/api/src/clusters/cluster-access.js';
import { FleetEventsService } from '../../apps/api/src/events/fleet-events.service.js';
import { SidecarAclSync } from '../../apps/worker/src/credentials/acl-sync.js';
import { startApi, type RunningApi } from './start-api.js';

interface Issued {
  reportToken: string;
  redisUrl: string;
  cluster: { id: string; uid: string };
}

const REGISTER = `mutation($name: String!) { registerCluster(input: { name: $name, topology: STANDALONE, platform: AWS, region: "us-east-1" }) {
  reportToken redisUrl bootstrapManifest cluster { id uid } } }`;

describe('per-cluster sidecar credentials', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let prisma: PrismaClient;
  const prefix = testQueuePrefix();
  let a: Issued;
  let b: Issued;
  const open: Redis[] = [];
  const redisAs = (url: string) => {
    // No reconnect loop: a refused password is the answer under test, not a fault to retry.
    const redis = new Redis(url, {
      maxRetriesPerRequest: null,
      lazyConnect: true,
      retryStrategy: () => null,
    });
    redis.on('error', () => undefined);
    open.push(redis);
    return redis;
  };
  const report = (uid: string, token: string, observedGeneration = 1, apiUrl = api.url) =>
    fetch(`${apiUrl}/v1/clusters/${uid}/status`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({
        clusterId: uid,
        observedGeneration,
        conditions: [],
        reportedAt: new Date().toISOString(),
      }),
    }).then((r) => r.status);

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startApi({
      DATABASE_URL: db.url,
      QUEUE_PREFIX: prefix,
      CREDENTIAL_GRACE_SECONDS: '2',
    });
    prisma = createPrismaClient(db.url);
    const register = async (name: string) => {
      const res = await api.admin<{ registerCluster: Issued }>(REGISTER, { name });
      if (!res.data) throw new Error(JSON.stringify(res.errors));
      return res.data.registerCluster;
    };
    a = await register('cluster-a');
    b = await register('cluster-b');
  });

  afterAll(async () => {
    await Promise.all(open.map((redis) => redis.quit().catch(() => redis.disconnect())));
    const admin = new Redis();
    await admin.call(
      'ACL',
      'DELUSER',
      `sidecar.${a.cluster.uid}`,
      `sidecar.${b.cluster.uid}`,
      `fleet-acl-synced.${prefix}`,
    );
    admin.disconnect();
    await prisma.$disconnect();
    await api.app.close();
    await db.drop();
  });

  it("reaches its own queue with its own Redis user, and gets NOPERM on another cluster's", async () => {
    const own = new Queue(sidecarQueueName(a.cluster.uid), {
      connection: redisAs(a.redisUrl),
      prefix,
    });
    expect(await own.getJobCounts('waiting')).toEqual({ waiting: expect.any(Number) });
    const other = new Queue(sidecarQueueName(b.cluster.uid), {
      connection: redisAs(a.redisUrl),
      prefix,
    });
    await expect(other.getJobCounts('waiting')).rejects.toThrow(/NOPERM/);
    await expect(redisAs(a.redisUrl).get(`${prefix}:{reconcile}:meta`)).rejects.toThrow(/NOPERM/);
    await expect(redisAs(a.redisUrl).call('ACL', 'LIST')).rejects.toThrow(/NOPERM/);
    await own.close();
    await other.close();
  });

  it('judges reports arriving together, before any is cached (one credentials look-up), each on its own', async () => {
    const unknown = '7f1c0a52-93b4-4c7e-8a39-2d0b5e1f6a11';
    const statuses = await Promise.all([
      report(a.cluster.uid, a.reportToken),
      report(b.cluster.uid, b.reportToken),
      report(b.cluster.uid, a.reportToken),
      report(unknown, a.reportToken),
      // Not PostgreSQL's uuid form: refused before any look-up, so it cannot spoil the batch.
      report('------------------------------------', a.reportToken),
      report(a.cluster.uid, a.reportToken),
    ]);
    expect(statuses).toEqual([202, 202, 401, 401, 401, 202]);
  });

  it("is refused when reporting for another cluster, or with another cluster's token", async () => {
    expect(await report(a.cluster.uid, a.reportToken)).toBe(202);
    expect(await report(b.cluster.uid, a.reportToken)).toBe(401);
    const res = await fetch(`${api.url}/v1/clusters/${a.cluster.uid}/status`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${a.reportToken}` },
      body: JSON.stringify({
        clusterId: b.cluster.uid,
        observedGeneration: 1,
        conditions: [],
        reportedAt: new Date().toISOString(),
      }),
    });
    expect(res.status).toBe(403);
  });

  it('hands out a bootstrap manifest carrying exactly these credentials', async () => {
    const res = await api.admin<{ registerCluster: Issued & { bootstrapManifest: string } }>(
      REGISTER,
      { name: 'cluster-c' },
    );
    const issued = res.data!.registerCluster;
    expect(issued.bootstrapManifest).toContain(`CLUSTER_ID: ${issued.cluster.uid}`);
    expect(issued.bootstrapManifest).toContain(`REPORT_TOKEN: ${issued.reportToken}`);
    expect(issued.bootstrapManifest).toContain(`REDIS_URL: ${issued.redisUrl}`);
    await api.admin(`mutation($id: ID!) { deregisterCluster(clusterId: $id) { id } }`, {
      id: issued.cluster.id,
    });
    await expect(redisAs(issued.redisUrl).ping()).rejects.toThrow(/WRONGPASS|NOAUTH|invalid/i);
  });

  it('refuses a deregistered cluster whose plan reports spelled its id in upper case', async () => {
    const res = await api.admin<{ registerCluster: Issued }>(REGISTER, { name: 'cluster-d' });
    const issued = res.data!.registerCluster;
    const upper = issued.cluster.uid.toUpperCase();
    const planReport = () =>
      fetch(`${api.url}/v1/clusters/${upper}/plans/0b6e5f1c-64a1-4b8e-9a0e-3c2f4d5e6a7b`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${issued.reportToken}`,
        },
        body: '{}',
      }).then((r) => r.status);
    // Authenticated (and the credentials cached), then refused for its empty body.
    expect(await planReport()).toBe(400);
    await api.admin(`mutation($id: ID!) { deregisterCluster(clusterId: $id) { id } }`, {
      id: issued.cluster.id,
    });
    expect(await planReport()).toBe(401);
  });

  it('rotates without downtime: old and new both work during the grace period, then only the new', async () => {
    const rotated = await api.admin<{
      rotateClusterCredentials: Issued & { previousValidUntil: string };
    }>(
      `mutation($id: ID!) { rotateClusterCredentials(clusterId: $id) { reportToken redisUrl previousValidUntil cluster { id uid } } }`,
      { id: a.cluster.id },
    );
    const next = rotated.data!.rotateClusterCredentials;
    expect(next.reportToken).not.toBe(a.reportToken);
    expect(await report(a.cluster.uid, a.reportToken)).toBe(202);
    expect(await report(a.cluster.uid, next.reportToken)).toBe(202);
    expect(await redisAs(a.redisUrl).ping()).toBe('PONG');
    expect(await redisAs(next.redisUrl).ping()).toBe('PONG');

    await new Promise((r) => setTimeout(r, 2100));
    await new SidecarAclSync(prisma, redisAs('redis://127.0.0.1:6379'), prefix).sync();
    expect(await report(a.cluster.uid, a.reportToken)).toBe(401);
    expect(await report(a.cluster.uid, next.reportToken)).toBe(202);
    await expect(redisAs(a.redisUrl).ping()).rejects.toThrow(/WRONGPASS/);
    expect(await redisAs(next.redisUrl).ping()).toBe('PONG');
  });

  it('recreates every sidecar user from PostgreSQL after Redis lost them', async () => {
    const admin = redisAs('redis://127.0.0.1:6379');
    await admin.call('ACL', 'DELUSER', `sidecar.${b.cluster.uid}`);
    await expect(redisAs(b.redisUrl).ping()).rejects.toThrow(/WRONGPASS/);
    await new SidecarAclSync(prisma, admin, prefix).sync();
    expect(await redisAs(b.redisUrl).ping()).toBe('PONG');
  });

  it('writes only the users changed since the last pass, and all of them once Redis lost its users', async () => {
    const admin = redisAs('redis://127.0.0.1:6379');
    const sync = new SidecarAclSync(prisma, admin, prefix, { clockSlackMs: 0 });
    const canLogIn = (url: string) =>
      redisAs(url)
        .ping()
        .then(
          () => true,
          () => false,
        );
    // A worker's first pass writes every user and leaves the marker on the node.
    expect(await sync.reconcile()).toEqual({ users: 2, expired: 0, full: true });
    expect(await sync.reconcile()).toEqual({ users: 0, expired: 0, full: false });
    // A registration or rotation whose own ACL write failed after its commit: the cluster row
    // changed, so the next pass writes that user (and only it).
    await admin.call('ACL', 'DELUSER', `sidecar.${b.cluster.uid}`);
    await prisma.cluster.update({
      where: { id: b.cluster.uid },
      data: { labels: { touched: 'yes' } },
    });
    expect(await sync.reconcile()).toEqual({ users: 1, expired: 0, full: false });
    expect(await canLogIn(b.redisUrl)).toBe(true);
    // Redis lost its ACL users (restarted empty, ACL reset): the marker is gone with them, and
    // the next pass writes every user, changed or not.
    expect(await sync.reconcile()).toEqual({ users: 0, expired: 0, full: false });
    await admin.call('ACL', 'DELUSER', `sidecar.${b.cluster.uid}`, `fleet-acl-synced.${prefix}`);
    expect(await canLogIn(b.redisUrl)).toBe(false);
    expect(await sync.reconcile()).toEqual({ users: 2, expired: 0, full: true });
    expect(await canLogIn(b.redisUrl)).toBe(true);
  });

  it("leaves no marker behind a full pass that failed part-way, so every replica's next pass is full", async () => {
    const admin = redisAs('redis://127.0.0.1:6379');
    const marker = `fleet-acl-synced.${prefix}`;
    const replica = new SidecarAclSync(prisma, admin, prefix, { clockSlackMs: 0 });
    expect((await replica.reconcile()).full).toBe(true);
    // Redis restarts empty; another replica starts the full pass, writes the marker and then
    // loses PostgreSQL before its pages.
    await admin.call('ACL', 'DELUSER', `sidecar.${b.cluster.uid}`, marker);
    const unreachable = createPrismaClient('postgresql://127.0.0.1:1/unreachable');
    await expect(new SidecarAclSync(unreachable, admin, prefix).reconcile()).rejects.toThrow();
    await unreachable.$disconnect();
    expect(await admin.call('ACL', 'GETUSER', marker)).toBeNull();
    // The replica that passed fully a moment ago would otherwise write only the changed users.
    expect(await replica.reconcile()).toEqual({ users: 2, expired: 0, full: true });
    expect(await redisAs(b.redisUrl).ping()).toBe('PONG');
  });

  it('trusts cached report credentials until a gap in the events subscription drops them all', async () => {
    // A replica of its own whose subscription checks are 300 s apart, so nothing but the
    // reconnect can drop its cache within this test.
    const replica = await startApi({
      DATABASE_URL: db.url,
      QUEUE_PREFIX: prefix,
      EVENTS_CHECK_SECONDS: '300',
    });
    const reportTo = (token: string) => report(b.cluster.uid, token, 1, replica.url);
    try {
      expect(await reportTo(b.reportToken)).toBe(202);
      // A rotation committed by another replica whose credentials-changed publish Redis refused:
      // this replica cannot know, and keeps trusting the cached token (for at most its lifetime).
      const replacement = `rotated-${Date.now()}`;
      await prisma.cluster.update({
        where: { id: b.cluster.uid },
        data: {
          reportTokenHash: hashToken(replacement),
          previousReportTokenHash: null,
          previousCredentialsExpireAt: null,
        },
      });
      expect(await reportTo(b.reportToken)).toBe(202);
      // Its events subscription drops (as in a Redis restart or a network blip): whatever was
      // published meanwhile is lost, so once it is back every cached credential is read again.
      // Both replicas' subscribers carry the same name; cutting both is harmless.
      const admin = redisAs('redis://127.0.0.1:6379');
      const clients = String(await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub'));
      const subscribers = clients
        .split('\n')
        .filter((line) => line.includes(` name=fleet-api-events:${prefix}`));
      expect(subscribers.length).toBeGreaterThanOrEqual(2);
      for (const line of subscribers)
        await admin.call('CLIENT', 'KILL', 'ID', /\bid=(\d+)/.exec(line)![1]!);
      const deadline = Date.now() + 10_000;
      let status = await reportTo(b.reportToken);
      while (status !== 401 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        status = await reportTo(b.reportToken);
      }
      expect(status).toBe(401);
      expect(await reportTo(replacement)).toBe(202);
    } finally {
      await replica.app.close();
    }
  });

  it('drops cached report credentials while its events subscription has gone quiet without a reconnect', async () => {
    // A replica of its own checking every 2 s (quiet after 5 s): short enough for the test, long
    // enough that a loaded machine's stall does not drop the cache before the subscription stops.
    const replica = await startApi({
      DATABASE_URL: db.url,
      QUEUE_PREFIX: prefix,
      EVENTS_CHECK_SECONDS: '2',
    });
    const reportTo = (token: string) => report(b.cluster.uid, token, 1, replica.url);
    const events: unknown = replica.app.get(FleetEventsService);
    const { subscriber } = events as { subscriber: Redis };
    try {
      const token = `quiet-${Date.now()}`;
      await prisma.cluster.update({
        where: { id: b.cluster.uid },
        data: { reportTokenHash: hashToken(token) },
      });
      expect(await reportTo(token)).toBe(202);
      // Another lost rotation: the cached token is still trusted.
      await prisma.cluster.update({
        where: { id: b.cluster.uid },
        data: { reportTokenHash: hashToken(`${token}-next`) },
      });
      expect(await reportTo(token)).toBe(202);
      // The subscription stops delivering while its connection stays up (a half-open
      // connection, a Redis Cluster moving its subscriber): nothing reconnects, only the
      // replica's own checks stop coming back. Reached into the service because no Redis command
      // unsubscribes another client.
      await subscriber.unsubscribe(fleetEventsChannel(prefix));
      const deadline = Date.now() + 20_000;
      let status = await reportTo(token);
      while (status !== 401 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        status = await reportTo(token);
      }
      expect(status).toBe(401);
      expect(await reportTo(`${token}-next`)).toBe(202);
    } finally {
      await replica.app.close();
    }
  });
});
