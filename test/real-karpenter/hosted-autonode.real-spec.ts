import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Deployment } from '@kubernetes/client-node';
import type { KubeObject } from '../support/kube-apiserver/index.js';

import { RealHyperShiftStandIn } from '../support/control-plane/hosted-clusters.js';
import {
  startKarpenterFromDeployment,
  type KarpenterProcess,
} from '../support/control-plane/karpenter-process.js';
import { HOSTED, HOSTED_SIDECAR_SA } from '../support/hcp-aws-hosted.js';
import { SimulatedKubelets } from '../support/control-plane/kubelets.js';
import {
  HOSTED_RELEASE_AMI,
  RealKarpenterOperatorStandIn,
} from '../support/control-plane/karpenter-operator.js';
import { SimulatedMachines } from '../support/control-plane/machines.js';
import { eventually } from '../support/processes.js';
import { refusedRequests } from '../support/control-plane/scenario.js';
import { grantedPermissions, unusedInAuditLog } from '../support/rbac-usage.js';
import { guestSidecarRbac } from '../../apps/sidecar/src/hosted/guest-identity.js';
import { ClusterClient } from '../../apps/sidecar/src/kube/cluster-client.js';
import {
  ROLE,
  hasCondition,
  startHostedFleet,
  type HostedFleet,
} from '../real-kubernetes/hosted-fleet.js';

// The hosted headline scenario (test/hosted/autonode) on real servers, the management cluster's
// and the guest's, through the fleet: the sidecar process, with only deploy/sidecar/hosted's Roles
// on the management cluster, sets spec.autoNode; HyperShift (a stand-in: it cannot be built here)
// runs Karpenter, whose Deployments the real controllers run; the fleet's NodePool and
// OpenshiftEC2NodeClass land in the guest; the management server's audit log shows nothing refused.

const HC_API = 'hypershift.openshift.io/v1beta1';

describe('hosted control plane in AutoNode mode, on real management and guest servers', () => {
  let fleet: HostedFleet;
  let hypershift: RealHyperShiftStandIn | undefined;
  let karpenter: KarpenterProcess | undefined;
  let operator: RealKarpenterOperatorStandIn | undefined;
  let guestKubelets: SimulatedKubelets | undefined;
  let machines: SimulatedMachines | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'fleet-hosted-karpenter-'));

  beforeAll(async () => {
    fleet = await startHostedFleet('AutoNode', (cluster) => {
      hypershift = new RealHyperShiftStandIn(cluster).start();
      operator = new RealKarpenterOperatorStandIn(cluster, cluster.ec2).start();
    });
  }, 180_000);
  afterAll(async () => {
    machines?.stop();
    guestKubelets?.stop();
    operator?.stop();
    await karpenter?.process.stop();
    hypershift?.stop();
    await fleet?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('enabling sets spec.autoNode; the NodePool and OpenshiftEC2NodeClass land in the guest; status is HyperShift’s; nothing refused', async () => {
    const { cluster } = fleet;
    await fleet.status(
      await fleet.setKarpenter({ clusterAutoscalerMode: 'KEEP' }),
      (cs) => hasCondition(cs, 'AutoNodeEnabled', 'False', 'AutoNodeNotConfigured'),
      'AutoNodeNotConfigured while Karpenter is disabled',
    );
    await fleet.upsertGeneralNodePool();
    const ready = await fleet.status(
      await fleet.setKarpenter({ enabled: true, webIdentityRoleArn: ROLE }),
      (cs) => hasCondition(cs, 'Available', 'True', 'AsExpected'),
      'Available from HyperShift’s AutoNodeEnabled',
    );
    expect(ready).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'AutoNodeEnabled', status: 'True', reason: 'AsExpected' }),
        expect.objectContaining({ type: 'HostedMode', status: 'True', reason: 'AutoNode' }),
        expect.objectContaining({ type: 'Degraded', status: 'False' }),
      ]),
    );
    expect(
      (await cluster.management.get(HC_API, 'HostedCluster', 'alpha', 'clusters'))?.spec,
    ).toEqual(
      expect.objectContaining({
        autoNode: {
          provisionerConfig: {
            name: 'Karpenter',
            karpenter: { platform: 'AWS', aws: { roleARN: ROLE } },
          },
        },
      }),
    );
    expect(
      await cluster.guest.get(
        'karpenter.hypershift.openshift.io/v1',
        'OpenshiftEC2NodeClass',
        'karpenter-fleet',
      ),
    ).toBeDefined();
    const pool = await cluster.guest.get('karpenter.sh/v1', 'NodePool', 'general');
    expect(
      (pool?.spec as { template: { spec: { nodeClassRef: unknown } } }).template.spec.nodeClassRef,
    ).toEqual({
      group: 'karpenter.k8s.aws',
      kind: 'EC2NodeClass',
      name: 'karpenter-fleet',
    });
    expect(refusedRequests(cluster.management, cluster.sidecarUser)).toEqual([]);
  }, 120_000);

  it("HyperShift's Karpenter (upstream v1.14.1 for OpenShift's fork) starts against the guest and manages the fleet's NodePool", async () => {
    const { cluster } = fleet;
    const ns = HOSTED.hcpNamespace;
    // As HyperShift runs it in the HCP namespace: the guest's admin kubeconfig from the
    // <infraID>-kubeconfig Secret; the fork's differences: test/upstream/karpenter-provider-aws-openshift.
    const deployment = (await cluster.management.get('apps/v1', 'Deployment', 'karpenter', ns)) as
      V1Deployment | undefined;
    expect(deployment).toBeDefined();
    const secret = await cluster.management.get('v1', 'Secret', `${HOSTED.infraID}-kubeconfig`, ns);
    const kubeconfigYaml = Buffer.from(
      (secret?.data as { value: string }).value,
      'base64',
    ).toString();
    karpenter = await startKarpenterFromDeployment(deployment!, {
      kubeconfigYaml,
      ec2: cluster.ec2,
      dir,
    });
    expect(karpenter.deploymentEnv).toMatchObject({
      CLUSTER_NAME: HOSTED.infraID,
      AWS_REGION: HOSTED.region,
      SYSTEM_NAMESPACE: ns,
    });
    await eventually(async () => ((await karpenter!.ready()) ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 500,
      what: `Karpenter ready (${karpenter.process.output().slice(-1500)})`,
    });
    // Karpenter manages a NodePool only when its nodeClassRef names a kind its provider serves
    // (IsManaged, sigs.k8s.io/karpenter pkg/utils/nodepool): then its readiness controller
    // writes NodeClassReady on it.
    const conditions = await eventually(
      async () => {
        const pool = await cluster.guest.get('karpenter.sh/v1', 'NodePool', 'general');
        const found = (pool?.status as { conditions?: { type: string }[] } | undefined)?.conditions;
        return found?.some((c) => c.type === 'NodeClassReady') ? found : undefined;
      },
      {
        timeoutMs: 30_000,
        intervalMs: 500,
        what: "Karpenter to manage the fleet's NodePool (NodeClassReady on its status)",
      },
    );
    expect(conditions.map((c) => c.type)).toContain('NodeClassReady');
  }, 120_000);

  it('the sidecar may change only spec.autoNode and its own annotation on its HostedCluster (issue 42, point 6)', async () => {
    const { cluster } = fleet;
    const token = await cluster.management.serviceAccountToken(
      HOSTED.hcpNamespace,
      HOSTED_SIDECAR_SA,
    );
    const path = await cluster.management.resourcePath(
      'hypershift.openshift.io/v1beta1',
      'HostedCluster',
      HOSTED.hostedCluster.name,
      HOSTED.hostedCluster.namespace,
    );
    const patch = (body: unknown) =>
      cluster.management.request('PATCH', path, body, 'application/merge-patch+json', token);
    // RBAC alone would let these through (patch on the HostedCluster by name).
    for (const [body, message] of [
      [{ spec: { release: { image: 'quay.io/attacker/release:evil' } } }, 'only spec.autoNode'],
      [
        { metadata: { annotations: { 'hypershift.openshift.io/silence': 'x' } } },
        'only its own annotation',
      ],
      [{ metadata: { labels: { team: 'x' } } }, 'may not change the labels'],
    ] as const) {
      const refused = await patch(body);
      expect({
        status: refused.status,
        message: (refused.json as { message?: string }).message,
      }).toEqual({
        status: 403,
        message: expect.stringContaining(message) as unknown,
      });
    }
    // What the sidecar itself writes still goes through.
    const live = await cluster.management.get(
      'hypershift.openshift.io/v1beta1',
      'HostedCluster',
      HOSTED.hostedCluster.name,
      HOSTED.hostedCluster.namespace,
    );
    const allowed = await patch({
      metadata: { annotations: { 'fleet.karpenter.sh/auto-node': 'true' } },
      spec: { autoNode: (live?.spec as { autoNode?: unknown }).autoNode },
    });
    expect(allowed.status).toBe(200);
  });

  it('a pending pod in the guest launches a node from the fleet’s NodePool: HyperShift derives the EC2NodeClass, approves the CSRs, the pod runs', async () => {
    const { cluster } = fleet;
    const { guest } = cluster;
    await guest.create({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'openshift-machine-config-operator' },
    });
    guestKubelets = new SimulatedKubelets(guest).start();
    const started = await new SimulatedMachines(guest, cluster.ec2, {
      // HyperShift's set-karpenter-taint KubeletConfig, rendered into every Karpenter node's
      // user data (support/karpenter KarpenterBaseTaints).
      registerWithTaints: () => [
        { key: 'karpenter.sh/unregistered', value: 'true', effect: 'NoExecute' },
      ],
    }).start();
    machines = started;
    // The EC2NodeClass HyperShift derived from the fleet's OpenshiftEC2NodeClass, Ready by
    // Karpenter's own conditions against the hosted account.
    await eventually(
      async () => {
        const nodeClass = await guest.get(
          'karpenter.k8s.aws/v1',
          'EC2NodeClass',
          'karpenter-fleet',
        );
        const conditions = (
          nodeClass?.status as { conditions?: { type: string; status: string }[] }
        )?.conditions;
        return conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
          ? true
          : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500, what: 'the derived EC2NodeClass to be Ready' },
    );
    await guest.create(
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'workloads' } },
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'inflate', namespace: 'workloads' },
        spec: {
          nodeSelector: { 'karpenter.sh/nodepool': 'general' },
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
        const live = await guest.get('v1', 'Pod', 'inflate', 'workloads');
        return (live?.status as { phase?: string } | undefined)?.phase === 'Running'
          ? live
          : undefined;
      },
      {
        timeoutMs: 90_000,
        intervalMs: 500,
        what: `the pod to run on a node Karpenter launched (machines failed: ${JSON.stringify(started.failed)})`,
      },
    );
    // The pod can run before the kubelet holds its serving certificate (joined is recorded then).
    await eventually(() => (started.joined.length > 0 ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 250,
      what: `the machine's serving certificate (machines failed: ${JSON.stringify(started.failed)})`,
    });
    expect(started.joined).toHaveLength(1);
    expect((pod.spec as { nodeName?: string }).nodeName).toBe(started.joined[0]!.nodeName);
    expect(operator!.approved).toEqual(
      expect.arrayContaining([started.joined[0]!.clientCsr, started.joined[0]!.servingCsr]),
    );
    const [claim] = (
      (await guest.request('GET', '/apis/karpenter.sh/v1/nodeclaims')).json as {
        items: KubeObject[];
      }
    ).items;
    expect(claim?.metadata?.labels).toMatchObject({ 'karpenter.sh/nodepool': 'general' });
    expect(
      Object.fromEntries(
        (claim?.status as { conditions: { type: string; status: string }[] }).conditions.map(
          (c) => [c.type, c.status],
        ),
      ),
    ).toMatchObject({ Launched: 'True', Registered: 'True', Initialized: 'True' });
    const launched = cluster.ec2.getInstance(started.joined[0]!.instanceId);
    expect(launched).toMatchObject({
      ImageId: HOSTED_RELEASE_AMI,
      InstanceType: expect.any(String),
    });
  }, 180_000);

  it('disabling removes the fleet’s objects from the guest as the sidecar’s own guest service account: nothing refused, no grant unused, no Secret readable (issue 42, point 6)', async () => {
    const { cluster } = fleet;
    const { guest } = cluster;
    // The pod goes first: Karpenter then drains nothing when the NodePool goes.
    await guest.request('DELETE', '/api/v1/namespaces/workloads/pods/inflate?gracePeriodSeconds=0');
    await fleet.status(
      await fleet.setKarpenter({ enabled: false }),
      (cs) => hasCondition(cs, 'AutoNodeEnabled', 'False', 'AutoNodeNotConfigured'),
      'AutoNode cleared once Karpenter removed the fleet’s NodeClaim',
    );
    expect(await guest.get('karpenter.sh/v1', 'NodePool', 'general')).toBeUndefined();
    expect(
      await guest.get(
        'karpenter.hypershift.openshift.io/v1',
        'OpenshiftEC2NodeClass',
        'karpenter-fleet',
      ),
    ).toBeUndefined();
    // The guest kubeconfig the sidecar was given is its own service account's, not HyperShift's
    // admin: it cannot read the guest's Secrets.
    const sidecarGuest = ClusterClient.fromKubeconfigFile(cluster.sidecarEnv.WORKLOAD_KUBECONFIG);
    expect(await sidecarGuest.whoAmI()).toBe(cluster.guestSidecarUser);
    expect(await sidecarGuest.allowed({ verb: 'list', resource: 'secrets' })).toBe(false);
    expect(
      await sidecarGuest.allowed({ verb: 'get', resource: 'secrets', namespace: 'kube-system' }),
    ).toBe(false);
    // Everything it did in the guest was granted, and everything granted was used.
    expect(refusedRequests(guest, cluster.guestSidecarUser)).toEqual([]);
    expect(
      unusedInAuditLog(
        grantedPermissions(guestSidecarRbac() as KubeObject[], cluster.guestSidecarUser),
        guest.auditedRequests(cluster.guestSidecarUser),
      ),
    ).toEqual([]);
    expect(refusedRequests(cluster.management, cluster.bootstrapUser)).toEqual([]);
  }, 180_000);
});
