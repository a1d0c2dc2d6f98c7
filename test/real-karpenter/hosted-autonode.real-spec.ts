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
  hostedEc2World,
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

  it('HyperShift derives the EC2NodeClass from the fleet’s overrides field by field (block devices from volumeSizeGiB, kubelet typed fields only), Karpenter makes it Ready, and its status comes back to the OpenshiftEC2NodeClass (issue 42, points 7, 8, 13)', async () => {
    const { cluster, api, id } = fleet;
    const { guest, management } = cluster;
    const overrides = await api.admin(
      `mutation($id: ID!, $input: NodeClassOverridesInput!) {
         setNodeClassOverrides(clusterId: $id, input: $input) { id } }`,
      {
        id,
        input: {
          blockDeviceMappings: [
            {
              deviceName: '/dev/xvda',
              rootVolume: 'RootVolume',
              ebs: {
                volumeSizeGiB: 200,
                volumeType: 'GP3',
                encrypted: 'Encrypted',
                deleteOnTermination: 'Delete',
              },
            },
            {
              deviceName: '/dev/xvdb',
              ebs: { volumeSizeGiB: 50, volumeType: 'GP2', encrypted: 'Unencrypted' },
            },
          ],
          kubelet: { maxPods: 110, containerLogMaxSize: '50Mi' },
          metadataOptions: { httpTokens: 'Required', httpPutResponseHopLimit: 2 },
          // cost-center is the HostedCluster's (resourceTags, no overridePolicy): it stays 5120.
          tags: { team: 'platform', 'cost-center': '9999' },
        },
      },
    );
    expect(overrides.errors).toBeUndefined();
    const ec2NodeClass = await eventually(
      async () => {
        const live = await guest.get('karpenter.k8s.aws/v1', 'EC2NodeClass', 'karpenter-fleet');
        const spec = live?.spec as { blockDeviceMappings?: unknown[] } | undefined;
        const ready = (
          live?.status as {
            conditions?: { type: string; status: string; observedGeneration?: number }[];
          }
        )?.conditions?.find((c) => c.type === 'Ready');
        return spec?.blockDeviceMappings?.length === 2 &&
          ready?.status === 'True' &&
          ready.observedGeneration === live?.metadata?.generation
          ? live
          : undefined;
      },
      {
        timeoutMs: 60_000,
        intervalMs: 500,
        what: `the derived EC2NodeClass with the overrides, Ready (operator errors: ${JSON.stringify([...operator!.errors])})`,
      },
    );
    const openshiftNodeClass = await guest.get(
      'karpenter.hypershift.openshift.io/v1',
      'OpenshiftEC2NodeClass',
      'karpenter-fleet',
    );
    expect(ec2NodeClass.metadata?.ownerReferences).toEqual([
      {
        apiVersion: 'karpenter.hypershift.openshift.io/v1',
        kind: 'OpenshiftEC2NodeClass',
        name: 'karpenter-fleet',
        uid: openshiftNodeClass!.metadata!.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    // What the API server kept of what the operator wrote: its conversions, Karpenter's CRD's
    // defaults where it wrote nothing.
    expect(ec2NodeClass.spec).toMatchObject({
      amiFamily: 'Custom',
      amiSelectorTerms: [{ id: HOSTED_RELEASE_AMI }],
      instanceProfile: `${HOSTED.infraID}-karpenter-worker`,
      blockDeviceMappings: [
        {
          deviceName: '/dev/xvda',
          rootVolume: true,
          ebs: {
            volumeSize: '200Gi',
            volumeType: 'gp3',
            encrypted: true,
            deleteOnTermination: true,
          },
        },
        {
          deviceName: '/dev/xvdb',
          ebs: { volumeSize: '50Gi', volumeType: 'gp2', encrypted: false },
        },
      ],
      kubelet: { maxPods: 110 },
      metadataOptions: { httpTokens: 'required', httpPutResponseHopLimit: 2 },
      tags: { 'cost-center': '5120', team: 'platform' },
    });
    expect((ec2NodeClass.spec as { kubelet: Record<string, unknown> }).kubelet).not.toHaveProperty(
      'containerLogMaxSize',
    );
    expect(ec2NodeClass.spec).not.toHaveProperty('detailedMonitoring');
    // The overflow field goes to the kubelet ConfigMap HyperShift renders into the user data.
    const kubeletConfig = await management.get(
      'v1',
      'ConfigMap',
      'karpenter-kubelet-karpenter-fleet',
      HOSTED.hcpNamespace,
    );
    expect((kubeletConfig?.data as { config: string }).config).toEqual(
      expect.stringContaining('containerLogMaxSize: 50Mi'),
    );
    // The status, mirrored from the EC2NodeClass Karpenter made Ready.
    const karpenterStatus = ec2NodeClass.status as {
      subnets: { id: string }[];
      securityGroups: unknown[];
    };
    const status = await eventually(
      async () => {
        const live = await guest.get(
          'karpenter.hypershift.openshift.io/v1',
          'OpenshiftEC2NodeClass',
          'karpenter-fleet',
        );
        const s = live?.status as
          { subnets?: unknown[]; conditions?: { type: string; status: string }[] } | undefined;
        return s?.subnets?.length &&
          s.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
          ? (live!.status as Record<string, unknown>)
          : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500, what: 'the OpenshiftEC2NodeClass status mirrored' },
    );
    const world = hostedEc2World();
    expect(status).toMatchObject({
      subnets: expect.arrayContaining(
        world.subnets!.map((s) => ({
          id: s.SubnetId,
          zone: s.AvailabilityZone,
          zoneID: s.AvailabilityZoneId,
        })),
      ) as unknown,
      securityGroups: karpenterStatus.securityGroups,
      releaseImage: 'quay.io/openshift-release-dev/ocp-release:4.21.3-x86_64',
      version: '4.21.3',
    });
    expect(
      Object.fromEntries(
        (status.conditions as { type: string; status: string; reason: string }[]).map((c) => [
          c.type,
          `${c.status} ${c.reason}`,
        ]),
      ),
    ).toMatchObject({
      Ready: 'True Ready',
      VersionResolved: 'True VersionNotSpecified',
      SupportedVersionSkew: 'True VersionNotSpecified',
      SubnetsReady: 'True SubnetsReady',
      AWSResourceTagConflict: 'True TagConflictDetected',
    });
    expect(openshiftNodeClass?.metadata?.finalizers).toEqual(
      expect.arrayContaining([
        'hypershift.openshift.io/ec2-nodeclass-finalizer',
        'hypershift.openshift.io/karpenter-kubelet-config-finalizer',
      ]),
    );
    // HyperShift's own class, beside the fleet's.
    expect(
      (await guest.get('karpenter.hypershift.openshift.io/v1', 'OpenshiftEC2NodeClass', 'default'))
        ?.spec,
    ).toEqual({
      subnetSelectorTerms: [
        {
          tags: {
            'kubernetes.io/role/internal-elb': '1',
            [`kubernetes.io/cluster/${HOSTED.infraID}`]: '*',
          },
        },
      ],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': HOSTED.infraID } }],
    });
    // The subnets ConfigMap HyperShift's VPC endpoints read, owned by the HostedControlPlane.
    const subnets = await management.get(
      'v1',
      'ConfigMap',
      'karpenter-subnets',
      HOSTED.hcpNamespace,
    );
    expect(subnets?.data).toEqual({
      subnetIDs: JSON.stringify(karpenterStatus.subnets.map((s) => s.id).sort()),
    });
    expect(subnets?.metadata?.labels).toMatchObject({
      'hypershift.openshift.io/managed-by': 'karpenter',
      'hypershift.openshift.io/infra-id': HOSTED.infraID,
    });
    expect(subnets?.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'HostedControlPlane', name: HOSTED.hostedCluster.name }),
    ]);
    // The EC2NodeClass is HyperShift's: anyone else (here the guest's admin) changing its spec is
    // refused by the operator's admission policy.
    const refused = await eventually(
      async () => {
        const res = await guest.request(
          'PATCH',
          '/apis/karpenter.k8s.aws/v1/ec2nodeclasses/karpenter-fleet',
          { spec: { detailedMonitoring: true } },
          'application/merge-patch+json',
        );
        // The policy's validation names no reason: Invalid, 422.
        return res.status === 422 ? res : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 250, what: 'the EC2NodeClass admission policy to refuse' },
    );
    expect((refused.json as { message?: string }).message).toContain(
      "EC2NodeClass resource can't be created/updated/deleted directly, please use OpenshiftEC2NodeClass resource instead",
    );
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
    // HyperShift counts it into HostedControlPlane status.autoNode (the fleet's billing data).
    const cpu = (claim?.status as { capacity: { cpu: string } }).capacity.cpu;
    await eventually(
      async () => {
        const hcp = await cluster.management.get(
          HC_API,
          'HostedControlPlane',
          HOSTED.hostedCluster.name,
          HOSTED.hcpNamespace,
        );
        const autoNode = (hcp?.status as { autoNode?: Record<string, number> }).autoNode;
        return autoNode?.nodeCount === 1 ? autoNode : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 250, what: 'status.autoNode to count the node' },
    ).then((autoNode) =>
      expect(autoNode).toEqual({ nodeCount: 1, nodeClaimCount: 1, vcpus: Math.ceil(Number(cpu)) }),
    );
    // Karpenter launched it from the derived EC2NodeClass: the converted block devices and
    // metadata options are in its launch template.
    expect(cluster.ec2.listLaunchTemplates().map((t) => t.Data)).toContainEqual(
      expect.objectContaining({
        'BlockDeviceMapping.1.DeviceName': '/dev/xvda',
        'BlockDeviceMapping.1.Ebs.VolumeSize': '200',
        'BlockDeviceMapping.1.Ebs.VolumeType': 'gp3',
        'BlockDeviceMapping.1.Ebs.Encrypted': 'true',
        'BlockDeviceMapping.2.DeviceName': '/dev/xvdb',
        'BlockDeviceMapping.2.Ebs.VolumeSize': '50',
        'MetadataOptions.HttpTokens': 'required',
        'MetadataOptions.HttpPutResponseHopLimit': '2',
      }),
    );
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
    // HyperShift's finalizers ran: the EC2NodeClass went first, then the class's ConfigMaps.
    expect(
      await guest.get('karpenter.k8s.aws/v1', 'EC2NodeClass', 'karpenter-fleet'),
    ).toBeUndefined();
    expect(
      await cluster.management.get(
        'v1',
        'ConfigMap',
        'karpenter-kubelet-karpenter-fleet',
        HOSTED.hcpNamespace,
      ),
    ).toBeUndefined();
    // HyperShift's HostedCluster controller cleared the counts the operator wrote.
    expect(
      (
        (
          await cluster.management.get(
            HC_API,
            'HostedControlPlane',
            HOSTED.hostedCluster.name,
            HOSTED.hcpNamespace,
          )
        )?.status as Record<string, unknown>
      ).autoNode,
    ).toBeUndefined();
    // HyperShift's own class `default` stays, and with it the subnets ConfigMap.
    expect(
      await guest.get('karpenter.hypershift.openshift.io/v1', 'OpenshiftEC2NodeClass', 'default'),
    ).toBeDefined();
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
