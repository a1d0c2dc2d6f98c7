import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CREDENTIALS_MOUNT_PATH,
  OPERAND_NAME,
  OPERAND_NAMESPACE,
  SERVICE_ACCOUNT_NAME,
} from '@fleet/cloud-provider';
import { eventually, fixtureInfrastructure, type KubeObject } from '@fleet/testing';
import type { V1Deployment } from '@kubernetes/client-node';

import {
  startKarpenterFromDeployment,
  type KarpenterProcess,
} from '../support/control-plane/karpenter-process.js';
import { SimulatedKubelets } from '../support/control-plane/kubelets.js';
import { MachineConfigPoolRenderer } from '../support/control-plane/machine-config-renderer.js';
import {
  SimulatedMachines,
  taintsOfMachineConfigPool,
  type Taint,
} from '../support/control-plane/machines.js';
import {
  SIDECAR_USER,
  startRealOpenShiftAwsCluster,
  type RealOpenShiftAwsCluster,
} from '../support/control-plane/openshift-cluster.js';
import { namespaceState, refusedRequests } from '../support/control-plane/scenario.js';
import { GENERAL_NODEPOOL, startSidecarRuntime, type Harness } from '../standalone-aws/harness.js';

// Standalone OpenShift on AWS with the real karpenter-provider-aws v1.14.1 (test/upstream) as the
// operand the fleet installs: a real kube-apiserver, kube-controller-manager and kube-scheduler,
// the EC2 emulator of the standalone fixture, and the sidecar acting as its service account. The
// provider runs with the environment and arguments of the Deployment the sidecar rendered and the
// token of the operand's service account, so the fleet's RBAC and settings are what it gets.
// Nothing plays Karpenter: the provider judges the EC2NodeClass, creates NodeClaims and launches
// instances; the test supplies only what the cluster's machines and kubelets would do
// (support/control-plane/machines.ts) and the sidecar approves their CSRs.

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

const NODECLASS = 'karpenter.k8s.aws/v1';
const KARPENTER_USER = `system:serviceaccount:${OPERAND_NAMESPACE}:${SERVICE_ACCOUNT_NAME}`;
/** Karpenter's field manager (controller-runtime's client, named after the binary). */
const KARPENTER_MANAGER = 'karpenter';
const WORKLOADS = 'workloads';

describe('karpenter-provider-aws v1.14.1 as the fleet installs it on standalone OpenShift on AWS', () => {
  let cluster: RealOpenShiftAwsCluster;
  let sidecar: Omit<Harness, 'cluster'>;
  let kubelets: SimulatedKubelets;
  let machines: SimulatedMachines;
  let mco: MachineConfigPoolRenderer;
  let karpenter: KarpenterProcess;
  let dir: string;
  let operandEnv: Record<string, string>;
  const infra = fixtureInfrastructure();
  const get = (apiVersion: string, kind: string, name: string, namespace?: string) =>
    cluster.plane.get(apiVersion, kind, name, namespace);
  const list = async (path: string) =>
    ((await cluster.plane.request('GET', path)).json as { items?: KubeObject[] }).items ?? [];
  const karpenterLog = () => karpenter?.process.output().slice(-3000) ?? '';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fleet-karpenter-aws-'));
    cluster = await startRealOpenShiftAwsCluster();
    kubelets = new SimulatedKubelets(cluster.plane);
    await kubelets.register('master-0');
    kubelets.start();
    // The MCO renders the pool the sidecar writes; the launch gate opens only then.
    mco = new MachineConfigPoolRenderer(cluster.plane).start();
    sidecar = await startSidecarRuntime(cluster, { requeueMs: 500 });
    await sidecar.runtime.apply(sidecar.order({ enabled: true, nodePools: [GENERAL_NODEPOOL] }));

    // The operand as the sidecar rendered it, as its service account.
    const deployment = (await get(
      'apps/v1',
      'Deployment',
      OPERAND_NAME,
      OPERAND_NAMESPACE,
    )) as V1Deployment;
    const token = await cluster.plane.serviceAccountToken(OPERAND_NAMESPACE, SERVICE_ACCOUNT_NAME);
    machines = await new SimulatedMachines(cluster.plane, cluster.ec2, {
      // The kubelet registers with the taints of the KubeletConfig the sidecar renders for the
      // NodeClass's pool, as the MCO would render it into the machine's configuration.
      registerWithTaints: taintsOfMachineConfigPool(cluster.plane),
    }).start();
    karpenter = await startKarpenterFromDeployment(deployment, {
      kubeconfigYaml: cluster.plane.kubeconfigYaml({ token }, 'karpenter'),
      ec2: cluster.ec2,
      dir,
    });
    operandEnv = karpenter.deploymentEnv;
  }, 180_000);
  afterAll(async () => {
    machines?.stop();
    mco?.stop();
    if (process.env.FLEET_KARPENTER_LOG)
      writeFileSync(process.env.FLEET_KARPENTER_LOG, karpenter?.process.output() ?? '');
    await karpenter?.process.stop();
    kubelets?.stop();
    await sidecar?.stop();
    await cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('runs with the Deployment’s own settings: what karpenter-operator sets, and credentials from the CredentialsRequest’s Secret', () => {
    expect(operandEnv).toMatchObject({
      SYSTEM_NAMESPACE: OPERAND_NAMESPACE,
      CLUSTER_NAME: infra.infraID,
      AWS_REGION: infra.region,
      AWS_SHARED_CREDENTIALS_FILE: `${CREDENTIALS_MOUNT_PATH}/credentials`,
    });
  });

  it("makes the fleet's default EC2NodeClass Ready from its own conditions, validation included", async () => {
    const conditions = await eventually(
      async () => {
        const nodeClass = await get(NODECLASS, 'EC2NodeClass', 'default');
        const found = (nodeClass?.status as { conditions?: Condition[] } | undefined)?.conditions;
        return found?.find((c) => c.type === 'Ready')?.status === 'True' ? found : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 500, what: `Ready=True (${karpenterLog()})` },
    );
    expect(Object.fromEntries(conditions.map((c) => [c.type, c.status]))).toEqual({
      AMIsReady: 'True',
      SubnetsReady: 'True',
      SecurityGroupsReady: 'True',
      InstanceProfileReady: 'True',
      CapacityReservationsReady: 'True',
      PlacementGroupReady: 'True',
      ValidationSucceeded: 'True',
      Ready: 'True',
    });
    // Validation really asked EC2: a launch template created, then CreateFleet and
    // RunInstances as dry runs, each answered DryRunOperation.
    const calls = cluster.ec2.requestLog.map(
      (r) => `${r.action}${r.params.DryRun ? ' (dry run)' : ''}`,
    );
    expect(calls).toEqual(
      expect.arrayContaining([
        'DescribeInstanceTypes (dry run)',
        'CreateLaunchTemplate',
        'CreateFleet (dry run)',
        'RunInstances (dry run)',
      ]),
    );
  });

  it('resolves the AMI, subnets, security groups and instance profile the fleet selects', async () => {
    const nodeClass = await get(NODECLASS, 'EC2NodeClass', 'default');
    const status = nodeClass?.status as {
      amis: { id: string }[];
      subnets: { id: string; zone: string }[];
      securityGroups: { id: string }[];
      instanceProfile: string;
    };
    expect(status.amis.map((a) => a.id)).toEqual([infra.worker.amiID]);
    expect(status.subnets.map((s) => s.id).sort()).toEqual(infra.subnets.map((s) => s.id).sort());
    expect(status.instanceProfile).toBe(infra.worker.instanceProfile);
    expect(status.securityGroups.map((g) => g.id).sort()).toEqual(
      [...infra.securityGroupIDs].sort(),
    );
  });

  it('takes a pending pod to a running pod: NodeClaim, CreateFleet, CSRs the sidecar approves, a Ready node', async () => {
    await cluster.plane.create(
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: WORKLOADS } },
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'inflate', namespace: WORKLOADS },
        spec: {
          nodeSelector: { 'karpenter.sh/nodepool': GENERAL_NODEPOOL.name },
          containers: [
            {
              name: 'pause',
              image: 'registry.k8s.io/pause:3.10',
              resources: { requests: { cpu: '1', memory: '1Gi' } },
            },
          ],
        },
      },
    );
    const pod = await eventually(
      async () => {
        const live = await get('v1', 'Pod', 'inflate', WORKLOADS);
        return (live?.status as { phase?: string } | undefined)?.phase === 'Running'
          ? live
          : undefined;
      },
      {
        timeoutMs: 120_000,
        intervalMs: 500,
        what: `the pod to run on a node Karpenter launched\nmachines: ${JSON.stringify(machines.failed)}\n${karpenterLog()}`,
      },
    ).catch(async (err: Error) => {
      throw new Error(`${err.message}\n${await namespaceState(cluster.plane, WORKLOADS)}`, {
        cause: err,
      });
    });

    // The scheduler found no node first: Karpenter acted on an Unschedulable pod.
    const events = await list(`/api/v1/namespaces/${WORKLOADS}/events`);
    expect(events.map((e) => (e as { reason?: string }).reason)).toEqual(
      expect.arrayContaining(['FailedScheduling', 'Nominated', 'Scheduled']),
    );
    // One instance, launched by a real CreateFleet, joined as the node the pod runs on.
    const launches = cluster.ec2.requestLog.filter(
      (r) => r.action === 'CreateFleet' && !r.params.DryRun,
    );
    expect(launches.length).toBeGreaterThanOrEqual(1);
    // The pod can run before the kubelet holds its serving certificate (joined is recorded then).
    await eventually(() => (machines.joined.length > 0 ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 250,
      what: `the machine's serving certificate (machines failed: ${JSON.stringify(machines.failed)})`,
    });
    expect(machines.joined).toHaveLength(1);
    const [machine] = machines.joined;
    const nodeName = (pod.spec as { nodeName?: string }).nodeName;
    expect(nodeName).toBe(machine!.nodeName);

    const claims = await list('/apis/karpenter.sh/v1/nodeclaims');
    expect(claims).toHaveLength(1);
    const claim = claims[0]!;
    expect(claim.status).toMatchObject({
      providerID: machine!.providerID,
      nodeName: machine!.nodeName,
    });
    const conditions = (claim.status as { conditions: Condition[] }).conditions;
    expect(Object.fromEntries(conditions.map((c) => [c.type, c.status]))).toMatchObject({
      Launched: 'True',
      Registered: 'True',
      Initialized: 'True',
      Ready: 'True',
    });
    // Both CSRs approved by the sidecar (and signed by kube-controller-manager).
    for (const name of [machine!.clientCsr, machine!.servingCsr]) {
      const csr = await get('certificates.k8s.io/v1', 'CertificateSigningRequest', name);
      expect((csr?.status as { conditions: Condition[] }).conditions).toEqual([
        expect.objectContaining({
          type: 'Approved',
          status: 'True',
          reason: 'KarpenterCSRApprove',
        }),
      ]);
    }
  });

  it("every NodeClaim was written by Karpenter's own manager, and by nobody else", async () => {
    const claims = await list('/apis/karpenter.sh/v1/nodeclaims');
    expect(claims.length).toBeGreaterThan(0);
    for (const claim of claims) {
      const managers = new Set(
        (claim.metadata?.managedFields ?? []).map((f) => (f as { manager?: string }).manager),
      );
      expect([...managers]).toEqual([KARPENTER_MANAGER]);
    }
  });

  it('the node registered with the taint Karpenter requires, so Karpenter reported no invariant broken', async () => {
    const events = await list('/api/v1/events?fieldSelector=involvedObject.kind%3DNodeClaim');
    expect(
      events
        .filter((e) => (e as { reason?: string }).reason === 'UnregisteredTaintMissing')
        .map((e) => (e as { message?: string }).message),
    ).toEqual([]);
    const node = await get('v1', 'Node', machines.joined[0]!.nodeName);
    const taints = ((node?.spec as { taints?: Taint[] } | undefined)?.taints ?? []).map(
      (t) => t.key,
    );
    // Karpenter lifted it at registration, and labelled the node as registered.
    expect(taints).not.toContain('karpenter.sh/unregistered');
    expect(node?.metadata?.labels).toMatchObject({
      'karpenter.sh/registered': 'true',
      'karpenter.sh/initialized': 'true',
      'karpenter.sh/nodepool': GENERAL_NODEPOOL.name,
    });
  });

  it('consolidates the node once its pod is gone: the Node and NodeClaim deleted, the instance terminated', async () => {
    const [machine] = machines.joined;
    await cluster.plane.request('DELETE', `/api/v1/namespaces/${WORKLOADS}/pods/inflate`);
    await eventually(
      async () =>
        (await list('/apis/karpenter.sh/v1/nodeclaims')).length === 0 &&
        !(await get('v1', 'Node', machine!.nodeName))
          ? true
          : undefined,
      { timeoutMs: 120_000, intervalMs: 1_000, what: 'the empty node to be consolidated' },
    );
    expect(cluster.ec2.getInstance(machine!.instanceId)?.State).toBe('terminated');
    const terminations = cluster.ec2.requestLog.filter((r) => r.action === 'TerminateInstances');
    expect(terminations.map((r) => r.params['InstanceId.1'])).toContain(machine!.instanceId);
  }, 150_000);

  it('nothing Karpenter or the sidecar asked was refused', () => {
    // The one refusal by design (docs/DOMAIN-PARITY.md, operand RBAC): the chart's kube-system
    // `kube-dns` Role is not rendered, OpenShift's DNS being openshift-dns/dns-default, and
    // Karpenter logs and goes on without the address (operator.go KubeDNSIP), which RHCOS's
    // Ignition user data never uses.
    const kubeDns = /^get \/api\/v1\/namespaces\/kube-system\/services\/kube-dns: 403 /;
    expect(refusedRequests(cluster.plane, KARPENTER_USER).filter((r) => !kubeDns.test(r))).toEqual(
      [],
    );
    expect(refusedRequests(cluster.plane, SIDECAR_USER)).toEqual([]);
    // Nothing else refused in EC2: the dry runs, and the lookup of a launch template before it
    // is created (launchtemplate.go ensureLaunchTemplate), are EC2's answers by design.
    const expected = new Set(['DryRunOperation', 'InvalidLaunchTemplateName.NotFoundException']);
    expect(cluster.ec2.requestLog.filter((r) => r.errorCode && !expected.has(r.errorCode))).toEqual(
      [],
    );
  });
});
