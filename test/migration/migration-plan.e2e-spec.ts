import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { clone, loadCrdSchema } from '@fleet/crd-schema';
import { join } from 'node:path';
import pg from 'pg';
import {
  CRDS_DIR,
  createTestDatabase,
  eventually,
  freePort,
  testQueuePrefix,
  type RunningProcess,
  type TestDatabase,
} from '@fleet/testing';
import { startEmulatedCluster, type EmulatedCluster } from '../support/emulated-cluster.js';
import { registerCluster, startSidecarProcess } from '../support/fleet-sidecar.js';
import { startApi, type Gql, type RunningApi } from '../api/start-api.js';
import { runKfleetInProcess } from '../cli/kfleet-process.js';
import { startWorker } from '../../apps/worker/src/main.js';

const PLAN = `query($id: ID!) { migrationPlan(clusterId: $id) { reason generation plan {
  computedAt observedGeneration nodePools { name spec replaces explanations }
  nodeClassOverrides notExpressible { object what reason } explanations } } }`;
const STATUS = `query($id: ID!) { cluster(id: $id) { inSync karpenter { generation clusterAutoscalerMode enabled }
  status { observedGeneration conditions { type status reason } } } }`;

interface Plan {
  reason: string | null;
  generation: number;
  plan: {
    computedAt: string;
    observedGeneration: number;
    nodePools: {
      name: string;
      spec: { template: { spec: { requirements: { key: string; values: string[] }[] } } };
      replaces: string[];
      explanations: string[];
    }[];
    notExpressible: { object: string; what: string; reason: string }[];
    explanations: string[];
  } | null;
}

interface MachineSetObject {
  metadata: { name: string };
  spec: {
    template: {
      spec: {
        providerSpec: { value: { instanceType: string; placement: { availabilityZone: string } } };
      };
    };
  };
}

/**
 * Issue 21 §3 through real interfaces: the fixture cluster on the Cluster Autoscaler (a
 * ClusterAutoscaler, three MachineAutoscalers and their MachineSets, an infra set without one),
 * a real sidecar process proposing NodePools in its reports, the worker storing the proposal,
 * `kfleet migrate plan|apply`, and the applied NodePools on the cluster as the API server
 * accepted them against the real CRDs, the Cluster Autoscaler still running (MIGRATE).
 */
describe('migration plan: from the Cluster Autoscaler to Karpenter', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let cluster: EmulatedCluster;
  let sidecar: RunningProcess;
  let gql: Gql;
  let clusterId: string;
  let clusterUid: string;
  let cli: NodeJS.ProcessEnv;
  const nodePoolSchema = loadCrdSchema(
    join(CRDS_DIR, 'karpenter', 'karpenter.sh_nodepools.yaml'),
    'v1',
  );

  const plan = async () => {
    const res = await gql<{ migrationPlan: Plan }>(PLAN, { id: clusterId });
    if (!res.data) throw new Error(JSON.stringify(res.errors));
    return res.data.migrationPlan;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    const prefix = testQueuePrefix();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix });
    worker = await startWorker({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix, LOG_LEVEL: 'warn' });
    cluster = await startEmulatedCluster();
    gql = api.admin;
    const registered = await registerCluster(gql, { name: 'prod-east' });
    clusterId = registered.id;
    clusterUid = registered.uid;
    sidecar = startSidecarProcess(
      cluster,
      registered,
      { apiUrl: api.url, queuePrefix: prefix },
      { OPS_PORT: String(await freePort()), HEARTBEAT_SECONDS: '2' },
    );
    cli = { KFLEET_API_URL: api.url, KFLEET_TOKEN: api.adminToken };
  });

  afterAll(async () => {
    await sidecar?.stop();
    await worker?.close();
    await api?.app.close();
    await cluster?.stop();
    await db?.drop();
  });

  it('the sidecar proposes one NodePool for the three worker MachineSets, explained, and says what cannot be carried over', async () => {
    const result = await eventually(async () => ((await plan()).plan ? plan() : undefined), {
      timeoutMs: 30_000,
      what: 'a migration plan reported',
    }).catch((err: Error) => {
      throw new Error(`${err.message}\n${sidecar.output()}`);
    });
    const p = result.plan!;
    expect(result.reason).toBeNull();
    expect(p.observedGeneration).toBe(1);
    expect(Date.parse(p.computedAt)).toBeGreaterThan(Date.now() - 60_000);
    expect(p.nodePools.map((n) => [n.name, n.replaces])).toEqual([
      [
        'worker',
        [
          'MachineSet/prod-east-7xk2p-worker-us-east-1a',
          'MachineSet/prod-east-7xk2p-worker-us-east-1b',
          'MachineSet/prod-east-7xk2p-worker-us-east-1c',
        ],
      ],
    ]);
    expect(p.nodePools[0]!.explanations[0]).toBe(
      'instance types m6i.xlarge from MachineSets prod-east-7xk2p-worker-us-east-1a, prod-east-7xk2p-worker-us-east-1b, prod-east-7xk2p-worker-us-east-1c',
    );
    expect(p.notExpressible).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          object: 'MachineSet/prod-east-7xk2p-worker-us-east-1a',
          what: 'minimum size 1',
        }),
        expect.objectContaining({
          object: 'ClusterAutoscaler/default',
          what: 'podPriorityThreshold -10',
        }),
      ]),
    );
    // Stored by the worker with the generation the report had observed.
    const pool = new pg.Pool({ connectionString: db.url });
    try {
      const { rows } = await pool.query<{ generation: number; computedAt: string }>(
        `SELECT "migrationProposalGeneration" AS generation, "migrationProposal"->>'computedAt' AS "computedAt"
           FROM "ClusterStatus" WHERE "clusterId" = $1`,
        [clusterUid],
      );
      expect(rows[0]?.generation).toBe(1);
      expect(rows[0]?.computedAt).toBeTruthy();
    } finally {
      await pool.end();
    }
  });

  it('kfleet migrate plan prints the NodePools, why, and what is not expressible', async () => {
    const out = await runKfleetInProcess(['migrate', 'plan', 'prod-east'], cli);
    expect(out).toMatchObject({ code: 0, stderr: '' });
    expect(out.stdout).toMatch(/^NODEPOOL\s+INSTANCE TYPES\s+ZONES\s+CAPACITY\s+LIMITS/);
    expect(out.stdout).toMatch(
      /worker\s+m6i\.xlarge\s+us-east-1a,us-east-1b,us-east-1c\s+on-demand\s+cpu=144,memory=576Gi,nodes=36/,
    );
    expect(out.stdout).toContain('worker: instance types m6i.xlarge from MachineSets');
    expect(out.stdout).toContain(
      'plan: MachineSet prod-east-7xk2p-infra-us-east-1a has no MachineAutoscaler',
    );
    expect(out.stdout).toMatch(/NOT EXPRESSIBLE\n\s+OBJECT\s+WHAT\s+REASON/);
    expect(out.stdout).toMatch(/MachineSet\/prod-east-7xk2p-worker-us-east-1c\s+minimum size 1/);
  });

  it('kfleet migrate apply: NodePools on the cluster that the API server accepted and that cover every MachineSet, the Cluster Autoscaler still running', async () => {
    const before = await plan();
    const out = await runKfleetInProcess(['migrate', 'apply', 'prod-east'], cli);
    expect(out).toMatchObject({ code: 0, stderr: '' });
    expect(out.stdout).toContain(
      `cluster/prod-east migration plan applied, karpenter enabled, cluster autoscaler MIGRATE (generation ${before.generation + 1},`,
    );
    // A second apply against the old generation is a conflict: what was reviewed is applied once.
    const again = await gql(
      `mutation($id: ID!, $g: Int!) { applyMigrationPlan(clusterId: $id, expectedGeneration: $g) { id } }`,
      { id: clusterId, g: before.generation },
    );
    expect(again.errors?.[0]?.extensions?.code).toBe('CONFLICT');

    const status = await eventually(
      async () => {
        const res = await gql<{
          cluster: {
            inSync: boolean;
            karpenter: { generation: number; clusterAutoscalerMode: string; enabled: boolean };
            status: { conditions: { type: string; status: string; reason: string }[] };
          };
        }>(STATUS, { id: clusterId });
        const c = res.data?.cluster;
        return c?.inSync && c.karpenter.generation === before.generation + 1 ? c : undefined;
      },
      { timeoutMs: 40_000, what: 'the applied plan reported in sync' },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${sidecar.output()}`);
    });
    expect(status.karpenter).toMatchObject({ enabled: true, clusterAutoscalerMode: 'MIGRATE' });
    expect(status.status.conditions).toEqual(
      expect.arrayContaining([
        { type: 'ClusterAutoscalerMigration', status: 'True', reason: 'BothAutoscalersActive' },
      ]),
    );

    const stored = cluster.kube.get('karpenter.sh/v1', 'NodePool', 'worker');
    expect(stored).toBeDefined();
    // What the API server stored (its defaults included) validates against the real CRD.
    expect(nodePoolSchema.validate(clone(stored!))).toEqual([]);
    expect(stored!.spec).toMatchObject({
      limits: { nodes: '36', cpu: '144', memory: '576Gi' },
      disruption: {
        consolidationPolicy: 'WhenEmpty',
        consolidateAfter: '5m',
        budgets: [{ nodes: '10%' }],
      },
    });
    // Every MachineSet a MachineAutoscaler scales: its instance type and zone are allowed.
    const requirements = (
      stored!.spec as { template: { spec: { requirements: { key: string; values: string[] }[] } } }
    ).template.spec.requirements;
    const allowed = (key: string) => requirements.find((r) => r.key === key)?.values ?? [];
    const scaled = cluster.kube
      .list('autoscaling.openshift.io/v1beta1', 'MachineAutoscaler', 'openshift-machine-api')
      .map((m) => (m.spec as { scaleTargetRef: { name: string } }).scaleTargetRef.name);
    expect(scaled).toHaveLength(3);
    for (const name of scaled) {
      const ms = cluster.kube.get(
        'machine.openshift.io/v1beta1',
        'MachineSet',
        name,
        'openshift-machine-api',
      ) as unknown as MachineSetObject;
      const machine = ms.spec.template.spec.providerSpec.value;
      expect([name, allowed('node.kubernetes.io/instance-type')]).toEqual([
        name,
        expect.arrayContaining([machine.instanceType]),
      ]);
      expect([name, allowed('topology.kubernetes.io/zone')]).toEqual([
        name,
        expect.arrayContaining([machine.placement.availabilityZone]),
      ]);
    }
    // The Cluster Autoscaler still runs beside Karpenter, and the plan is still offered.
    expect(
      cluster.kube.get('autoscaling.openshift.io/v1', 'ClusterAutoscaler', 'default'),
    ).toBeDefined();
    expect(scaled).toHaveLength(3);
    const after = await plan();
    expect(after.plan?.nodePools.map((n) => n.name)).toEqual(['worker']);

    // One audited change.
    const pool = new pg.Pool({ connectionString: db.url });
    try {
      const { rows } = await pool.query<{ action: string }>(
        `SELECT action FROM "AuditEvent" WHERE "clusterId" = $1 AND action = 'applyMigrationPlan'`,
        [clusterUid],
      );
      expect(rows).toHaveLength(1);
    } finally {
      await pool.end();
    }
  });
});
