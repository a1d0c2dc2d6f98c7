import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ingestKey, unstorableTextReason } from '@fleet/contracts';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { createTestDatabase, eventually, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import { startWorker } from '../../apps/worker/src/main.js';
import {
  DatabaseFingerprint,
  fuzzParameters,
  hostileString,
  startFuzzedApi,
  type FuzzedApi,
} from './fuzz-support.js';

/**
 * Issue 17: property-based fuzzing of the sidecar report endpoint, through the built API process
 * and the real worker. Each generated report is either valid — then accepted (202), ingested by
 * the worker without a failed attempt and recorded as sent — or carries exactly one known defect
 * and is refused (400) naming that field, with no ingest job and nothing written to PostgreSQL.
 * The API stays healthy and its memory bounded throughout.
 */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const RUNS = 80;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Path = (string | number)[];

const iso = fc
  .date({ min: new Date('1971-01-01T00:00:00Z'), max: new Date('2999-12-31T00:00:00Z') })
  .map((d) => d.toISOString());
/**
 * Any string a Kubernetes object could carry, control characters included; NUL and unpaired
 * surrogates, which PostgreSQL cannot store, are defects below.
 */
const text = (maxLength: number) =>
  hostileString
    .map((s) => s.slice(0, maxLength))
    .filter((s) => unstorableTextReason(s) === undefined);
const nat = fc.nat({ max: 1_000_000 });

const condition = fc.record({
  type: fc.stringMatching(/^[A-Z][A-Za-z0-9]{0,20}$/),
  status: fc.constantFrom('True', 'False', 'Unknown'),
  reason: fc.stringMatching(/^[A-Za-z]([A-Za-z0-9_,:]{0,20}[A-Za-z0-9_])?$/),
  message: text(500),
  lastTransitionTime: iso,
});

const metrics = fc.record(
  {
    nodes: nat,
    nodeClaims: nat,
    nodeClaimsByState: fc.dictionary(fc.stringMatching(/^[A-Z][A-Za-z0-9]{0,20}$/), nat, {
      maxKeys: 16,
    }),
    nodePools: nat,
    vcpus: fc.double({ min: 0, max: 1e6, noNaN: true }),
    pendingPods: nat,
    csrApproved: nat,
    csrIgnored: nat,
    csrDenied: nat,
    csrDecisionsDropped: nat,
    nodeClaimLaunchFailures: nat,
    nodeClaimLaunchFailureTimes: fc.array(iso, { maxLength: 64 }),
    oldestPendingPodSince: iso,
    oldestPendingPodSeconds: nat,
  },
  { requiredKeys: [] },
);

const csrDecision = fc.record(
  {
    csrName: fc.oneof(fc.stringMatching(/^csr-[a-z0-9]{1,12}$/), text(253)),
    nodeName: text(253),
    signerName: fc.oneof(fc.constant('kubernetes.io/kube-apiserver-client-kubelet'), text(253)),
    decision: fc.constantFrom('Approved', 'Ignored', 'Denied'),
    reason: text(64),
    message: text(1024),
    decidedAt: iso,
  },
  { requiredKeys: ['csrName', 'signerName', 'decision', 'reason', 'message', 'decidedAt'] },
);

const machineConfigPool = fc.record(
  {
    nodeClass: text(253),
    name: text(253),
    machineCount: nat,
    updatedMachineCount: nat,
    updatingMachineCount: nat,
    degradedMachineCount: nat,
    readyMachineCount: nat,
    renderedConfig: text(253),
    conditions: fc.array(condition, { maxLength: 3 }),
  },
  {
    requiredKeys: [
      'nodeClass',
      'name',
      'machineCount',
      'updatedMachineCount',
      'updatingMachineCount',
      'degradedMachineCount',
      'readyMachineCount',
      'conditions',
    ],
  },
);

/** A report the contract admits, for a cluster whose desired generation is `generation`. */
const validReport = (clusterId: string, generation: number) =>
  fc.record(
    {
      clusterId: fc.constant(clusterId),
      observedGeneration: fc.integer({ min: 0, max: generation }),
      conditions: fc.array(condition, { maxLength: 6 }),
      metrics,
      csrDecisions: fc.array(csrDecision, { maxLength: 4 }),
      clusterAutoscaler: fc.record({
        mode: fc.constantFrom('KEEP', 'DISABLE', 'MIGRATE'),
        observed: fc.constantFrom('Present', 'Removed', 'Absent'),
        machineAutoscalers: nat,
      }),
      machineConfigPools: fc.array(machineConfigPool, { maxLength: 2 }),
      sidecar: fc.record({
        version: text(64).filter((v) => v.length > 0),
        contractVersion: fc.integer({ min: 1, max: 5 }),
      }),
      reportedAt: iso,
    },
    { requiredKeys: ['clusterId', 'observedGeneration', 'conditions', 'reportedAt'] },
  ) as fc.Arbitrary<Record<string, Json>>;

/** Every path to a value inside a JSON document, the document's own root excluded. */
const pathsOf = (value: Json, prefix: Path = []): Path[] =>
  value !== null && typeof value === 'object'
    ? Object.entries(value).flatMap(([k, v]) => {
        const path = [...prefix, Array.isArray(value) ? Number(k) : k];
        return [path, ...pathsOf(v, path)];
      })
    : [];

const kindOf = (v: Json) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
const SAMPLES: Record<string, Json> = {
  null: null,
  boolean: true,
  number: 7,
  string: 'seven',
  array: [],
  object: {},
};

const withValue = (doc: Record<string, Json>, path: Path, value: Json): Record<string, Json> => {
  const copy = structuredClone(doc);
  let node = copy as Record<string | number, Json>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, Json>;
  node[path.at(-1)!] = value;
  return copy;
};

/** One defect, and the field the API must name for it. */
interface Defect {
  kind: string;
  field: string;
  apply(doc: Record<string, Json>): Record<string, Json>;
}

const defects = (report: Record<string, Json>, generation: number): fc.Arbitrary<Defect> => {
  const paths = pathsOf(report).filter((p) => p[0] !== 'clusterId');
  const retyped = fc
    .tuple(fc.constantFrom(...paths), fc.constantFrom(...Object.keys(SAMPLES)))
    .filter(([path, kind]) => {
      const current = path.reduce<Json>((n, k) => (n as Record<string, Json>)[k]!, report);
      // A new key inside a free-form map (nodeClaimsByState) is a key, not a retyped value.
      return kind !== kindOf(current);
    })
    .map(([path, kind]) => ({
      kind: `${path.join('.')} as ${kind}`,
      field: path.join('.'),
      apply: (doc: Record<string, Json>) => withValue(doc, path, SAMPLES[kind]!),
    }));
  const strings = paths.filter(
    (p) =>
      p[0] !== 'clusterId' &&
      typeof p.reduce<Json>((n, k) => (n as Record<string, Json>)[k]!, report) === 'string',
  );
  const unstorable = fc
    .tuple(
      fc.constantFrom(...(strings.length ? strings : [['reportedAt']])),
      fc.constantFrom('\u0000', '\ud800', '\udc00x'),
    )
    .map(([path, bad]) => ({
      kind: `${bad} in ${path.join('.')}`,
      field: path.join('.'),
      apply: (doc: Record<string, Json>) =>
        withValue(
          doc,
          path,
          `${path.reduce<Json>((n, k) => (n as Record<string, Json>)[k]!, doc) as string}${bad}`,
        ),
    }));
  const targeted: Defect[] = [
    {
      kind: 'a NodeClaim state named __proto__',
      field: 'metrics.nodeClaimsByState.__proto__',
      apply: (d) => ({
        ...d,
        metrics: JSON.parse('{"nodeClaimsByState":{"__proto__":1}}') as Json,
      }),
    },
    {
      kind: 'NUL in a key of a free-form map',
      field: 'metrics.nodeClaimsByState.Launched\u0000',
      // The key fails the CamelCase rule before PostgreSQL's would matter: same field either way.
      apply: (d) => ({ ...d, metrics: { nodeClaimsByState: { 'Launched\u0000': 1 } } }),
    },
    {
      kind: 'a generation never ordered',
      field: 'observedGeneration',
      apply: (d) => ({ ...d, observedGeneration: generation + 1 }),
    },
    {
      kind: 'a fractional generation',
      field: 'observedGeneration',
      apply: (d) => ({ ...d, observedGeneration: 0.5 }),
    },
    {
      kind: 'a lower-case condition type',
      field: 'conditions.0.type',
      apply: (d) => ({
        ...d,
        conditions: [
          {
            type: 'degraded',
            status: 'True',
            reason: 'X',
            message: '',
            lastTransitionTime: new Date().toISOString(),
          },
        ],
      }),
    },
    {
      kind: 'a condition message longer than metav1.Condition allows',
      field: 'conditions.0.message',
      apply: (d) => ({
        ...d,
        conditions: [
          {
            type: 'Degraded',
            status: 'True',
            reason: 'X',
            message: 'm'.repeat(32_769),
            lastTransitionTime: new Date().toISOString(),
          },
        ],
      }),
    },
    {
      kind: '65 conditions',
      field: 'conditions',
      apply: (d) => ({
        ...d,
        conditions: Array.from({ length: 65 }, (_, i) => ({
          type: `T${i}`,
          status: 'True',
          reason: 'X',
          message: '',
          lastTransitionTime: new Date().toISOString(),
        })),
      }),
    },
    {
      kind: 'a negative node count',
      field: 'metrics.nodes',
      apply: (d) => ({ ...d, metrics: { nodes: -1 } }),
    },
    {
      kind: 'a date that is not ISO 8601',
      field: 'reportedAt',
      apply: (d) => ({ ...d, reportedAt: 'Tue, 01 Dec 2026 06:00:00 GMT' }),
    },
    {
      kind: 'no clusterId',
      field: 'clusterId',
      apply: ({ clusterId: _, ...d }) => d,
    },
  ];
  return paths.length
    ? fc.oneof(retyped, unstorable, fc.constantFrom(...targeted))
    : fc.oneof(unstorable, fc.constantFrom(...targeted));
};

interface Stored {
  observedGeneration: number;
  lastReportAt: Date | null;
  metrics: Json;
  machineConfigPools: Json;
  sidecarVersion: string | null;
  sidecarContractVersion: number;
  clusterAutoscaler: Json;
}

describe('fuzz: the sidecar report endpoint', () => {
  let db: TestDatabase;
  let api: FuzzedApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let fingerprint: DatabaseFingerprint;
  let redis: Redis;
  let cluster: { uid: string; reportToken: string; generation: number };
  const prefix = testQueuePrefix();
  const stream = ingestKey(prefix, 'reports');

  const post = (body: unknown) =>
    fetch(`${api.url}/v1/clusters/${cluster.uid}/status`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${cluster.reportToken}`,
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
  const stored = async () =>
    (
      await fingerprint.sql<Stored>(
        `SELECT "observedGeneration", "lastReportAt", metrics, "machineConfigPools", "sidecarVersion",
                "sidecarContractVersion", "clusterAutoscaler" FROM "ClusterStatus" WHERE "clusterId" = $1`,
        [cluster.uid],
      )
    )[0]!;
  /** The report stream's last entry id: unchanged means nothing was queued. */
  const lastEntryId = async () => {
    const info = (await redis.xinfo('STREAM', stream).catch(() => [])) as unknown[];
    const at = info.indexOf('last-generated-id');
    return at >= 0 ? String(info[at + 1]) : '0-0';
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    const env = { DATABASE_URL: db.url, REDIS_URL, QUEUE_PREFIX: prefix };
    api = await startFuzzedApi({
      ...env,
      REPORTS_PER_CLUSTER_PER_MINUTE: '100000',
      RATE_LIMIT_PER_MINUTE: '100000',
    });
    worker = await startWorker({ ...env, LOG_LEVEL: 'silent', JOB_LOCK_MS: '120000' });
    fingerprint = await DatabaseFingerprint.open(db.url);
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    const res = await api.admin<{
      registerCluster: { reportToken: string; cluster: { uid: string } };
    }>(
      `mutation { registerCluster(input: { name: "fuzzed", topology: STANDALONE, platform: AWS, region: "us-east-1" }) { reportToken cluster { uid } } }`,
    );
    if (!res.data) throw new Error(JSON.stringify(res.errors));
    const { uid } = res.data.registerCluster.cluster;
    const [desired] = await fingerprint.sql<{ generation: number }>(
      `SELECT generation FROM "DesiredState" WHERE "clusterId" = $1`,
      [uid],
    );
    cluster = {
      uid,
      reportToken: res.data.registerCluster.reportToken,
      generation: desired!.generation,
    };
  }, 90_000);

  afterAll(async () => {
    redis?.disconnect();
    await fingerprint?.close();
    await worker?.close();
    await api?.stop();
    const admin = new Redis(REDIS_URL);
    if (cluster) await admin.call('ACL', 'DELUSER', `sidecar.${cluster.uid}`);
    admin.disconnect();
    await db?.drop();
  });

  it('accepts and records every valid report, refuses every defective one naming its field, writes nothing for it, and stays healthy', async () => {
    const baseline = api.rssBytes();
    const cases = fc.oneof(
      validReport(cluster.uid, cluster.generation).map((report) => ({ report, defect: undefined })),
      validReport(cluster.uid, cluster.generation).chain((report) =>
        defects(report, cluster.generation).map((defect: Defect | undefined) => ({
          report,
          defect,
        })),
      ),
    );
    await fc.assert(
      fc.asyncProperty(cases, async ({ report, defect }) => {
        const body = defect ? defect.apply(report) : report;
        const before = await fingerprint.take();
        const previous = await stored();
        const lastEntry = await lastEntryId();
        const sentAt = Date.now();
        const res = await post(body);
        const answer = (await res.json()) as { field?: string; message?: string };

        if (defect) {
          expect({ status: res.status, field: answer.field }).toEqual({
            status: 400,
            field: defect.field,
          });
          expect(answer.message).toEqual(expect.any(String));
          expect(await lastEntryId()).toBe(lastEntry);
          expect(DatabaseFingerprint.changed(before, await fingerprint.take())).toEqual([]);
        } else {
          expect({ status: res.status, answer }).toEqual({
            status: 202,
            answer: { accepted: true },
          });
          // Ingested by the real worker, first time: the worker deletes an entry only once it is
          // committed, and one it could not store stays pending for the claim delay (JOB_LOCK_MS,
          // 120 s here), far past this wait: a report the API accepted that cannot be stored
          // fails here.
          const entry = await lastEntryId();
          expect(entry).not.toBe(lastEntry);
          await eventually(
            async () =>
              (await redis.xrange(stream, entry, entry)).length === 0 ? true : undefined,
            { timeoutMs: 30_000, what: 'the report ingested' },
          );
          const now = await stored();
          const forward = (report.observedGeneration as number) >= previous.observedGeneration;
          if (forward) {
            expect(now.observedGeneration).toBe(report.observedGeneration);
            // Stamped with the fleet's clock at reception, whatever the sidecar's reportedAt.
            expect(now.lastReportAt!.getTime()).toBeGreaterThanOrEqual(sentAt - 1_000);
            expect(now.lastReportAt!.getTime()).toBeLessThanOrEqual(Date.now() + 1_000);
            expect(now.metrics).toEqual(report.metrics ?? {});
            expect(now.machineConfigPools).toEqual(report.machineConfigPools ?? null);
            const sidecar = report.sidecar as
              { version: string; contractVersion: number } | undefined;
            expect(now.sidecarVersion).toBe(sidecar?.version ?? null);
            expect(now.sidecarContractVersion).toBe(sidecar?.contractVersion ?? 1);
          } else {
            expect(now).toEqual(previous);
          }
          const decisions = (report.csrDecisions ?? []) as { csrName: string }[];
          for (const d of decisions) {
            const rows = await fingerprint.sql(
              `SELECT 1 FROM "CsrDecision" WHERE "clusterId" = $1 AND "csrName" = $2`,
              [cluster.uid, d.csrName],
            );
            expect({ csrName: d.csrName, recorded: rows.length > 0 }).toEqual({
              csrName: d.csrName,
              recorded: true,
            });
          }
        }
        expect(await api.healthy()).toBe(true);
      }),
      fuzzParameters(RUNS, 'report endpoint'),
    );
    // Bounded: what the API holds after the runs is not proportional to what it was sent.
    expect(api.rssBytes() - baseline).toBeLessThan(150 * 1024 * 1024);
    expect(api.rssBytes()).toBeLessThan(512 * 1024 * 1024);
  }, 120_000);
});
