import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import {
  AWS_HOSTED_DRIVER,
  AwsHostedCloudProvider,
  CONVERGED_OPERAND_NAME,
  loadCustomResourceDefinitions,
  type ClusterDriver,
} from '@fleet/cloud-provider';
import { KubeClusterObjectReader, type HostedAwsInfrastructure } from '@fleet/discovery';
import {
  CRDS_DIR,
  HOSTED,
  NodeLaunchSimulator,
  eventually,
  hostedFixtureObjects,
  startEmulatedHostedCluster,
  type EmulatedHostedCluster,
} from '@fleet/testing';
import { KubeConfig } from '@kubernetes/client-node';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { ReconcileOrder } from '@fleet/contracts';
import { apiServersFor } from '../kube/api-servers.js';
import { ClusterClient, describeKubeError } from '../kube/cluster-client.js';
import { CONVERGED_FINALIZER, NODECLAIM_TERMINATION_TIMESTAMP } from './converged-mode.js';
import { HostedRuntime } from './hosted-runtime.js';

const HC_API = 'hypershift.openshift.io/v1beta1';
const ROLE = 'arn:aws:iam::111122223333:role/alpha-k7m2x-karpenter';
const CPO_IMAGE = 'quay.io/hypershift/control-plane-operator@sha256:' + 'c'.repeat(64);

const order = (generation: number, spec: Partial<ReconcileOrder['spec']>): ReconcileOrder => ({
  contractVersion: 2,
  clusterId: '0b7a4c1e-8d2f-4e6a-9c3b-1f2e3d4c5b6a',
  generation,
  platform: 'AWS',
  topology: 'HOSTED',
  spec: {
    enabled: false,
    paused: false,
    clusterAutoscalerMode: 'KEEP',
    logLevel: 'info',
    featureGates: {},
    nodePools: [],
    nodeClassOverrides: {},
    ...spec,
  },
});
const enabled = {
  enabled: true,
  webIdentityRoleArn: ROLE,
  // An SRE's override (the tag rules apply to it).
  nodeClassOverrides: { tags: { team: 'ml' } },
  nodePools: [{ name: 'general', spec: { template: { spec: { requirements: [] } } } }],
};

/** HyperShift's user-data Secret for the fleet's OpenshiftEC2NodeClass (its Ignition pipeline's). */
const userDataSecret = () => {
  const fixture = hostedFixtureObjects().find(
    (o) => o.kind === 'Secret' && o.metadata?.name === 'user-data-default-karpenter-3f9a1c',
  )!;
  return {
    ...fixture,
    metadata: {
      ...fixture.metadata,
      name: 'user-data-karpenter-fleet-karpenter-7d2e01',
      annotations: { 'hypershift.openshift.io/nodePool': 'clusters/karpenter-fleet-karpenter' },
    },
  };
};

/**
 * Converged mode against a management and a guest emulated API server, the sidecar with only
 * deploy/sidecar/hosted and hosted-converged's Roles on the management cluster.
 */
describe('HostedRuntime (converged mode)', () => {
  let cluster: EmulatedHostedCluster;
  let tmp: string;
  const runtimes: HostedRuntime[] = [];
  let crds: Awaited<ReturnType<typeof loadCustomResourceDefinitions>>;

  const runtime = (guestKubeconfigPath?: string, guestUnreachableGraceMs?: number) => {
    const apiServers = apiServersFor(['management', 'workload'], cluster.sidecarEnv);
    const reader = new KubeClusterObjectReader(apiServers.kubeConfig('management'), 5_000);
    const driver = AWS_HOSTED_DRIVER.create({
      reader: () => reader,
      env: cluster.sidecarEnv,
    }) as ClusterDriver<HostedAwsInfrastructure>;
    const r = new HostedRuntime({
      apiServers,
      driver,
      reader,
      mode: 'Converged',
      hcpNamespace: HOSTED.hcpNamespace,
      log: pino({ level: 'silent' }),
      requeueMs: 60_000,
      crds,
      proxy: { httpsProxy: 'http://proxy.mgmt:3128' },
      ...(guestKubeconfigPath ? { guestKubeconfigPath } : {}),
      ...(guestUnreachableGraceMs !== undefined ? { guestUnreachableGraceMs } : {}),
    });
    runtimes.push(r);
    return r;
  };
  const condition = (r: Awaited<ReturnType<HostedRuntime['apply']>>, type: string) =>
    r.conditions.find((c) => c.type === type);
  const hcp = () =>
    cluster.management.get(HC_API, 'HostedControlPlane', 'alpha', HOSTED.hcpNamespace);

  beforeAll(async () => {
    cluster = await startEmulatedHostedCluster('Converged');
    crds = await loadCustomResourceDefinitions(
      new AwsHostedCloudProvider(HOSTED.hcpNamespace).convergedCustomResourceDefinitions(),
      CRDS_DIR,
    );
    // Every HCP namespace runs HyperShift's control-plane-operator; its image has the token-minter.
    cluster.management.seed([
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'control-plane-operator', namespace: HOSTED.hcpNamespace },
        spec: {
          selector: { matchLabels: { app: 'control-plane-operator' } },
          template: {
            metadata: { labels: { app: 'control-plane-operator' } },
            spec: { containers: [{ name: 'control-plane-operator', image: CPO_IMAGE }] },
          },
        },
      },
    ]);
    tmp = mkdtempSync(join(tmpdir(), 'converged-'));
  }, 30_000);

  afterEach(async () => {
    for (const r of runtimes.splice(0)) await r.stop();
  });

  afterAll(async () => {
    await cluster?.stop();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('the hosted driver owns HostedControlPlane status.autoNode in converged mode only', () => {
    const driver = (env: Record<string, string>) =>
      AWS_HOSTED_DRIVER.create({ reader: () => undefined as never, env }).statusSurfaces;
    expect(driver(cluster.sidecarEnv)).toEqual(['HostedControlPlaneAutoNode']);
    expect(driver({ ...cluster.sidecarEnv, HOSTED_MODE: 'AutoNode' })).toEqual([]);
  });

  it('enabling: the operand in the HCP namespace, CRDs, RBAC and the fleet’s objects in the guest; a NodeClass without its user-data Secret is not ready', async () => {
    const r = runtime();
    const result = await r.apply(order(1, enabled));
    expect(condition(result, 'Degraded')).toEqual(
      expect.objectContaining({ status: 'False', reason: 'AsExpected' }),
    );
    expect(condition(result, 'HostedMode')).toEqual(
      expect.objectContaining({ status: 'True', reason: 'Converged' }),
    );
    const deployment = cluster.management.get(
      'apps/v1',
      'Deployment',
      CONVERGED_OPERAND_NAME,
      HOSTED.hcpNamespace,
    );
    const pod = (
      deployment?.spec as {
        template: {
          spec: {
            containers: { env: { name: string; value?: string }[] }[];
            initContainers: { image: string }[];
          };
        };
      }
    ).template.spec;
    const env = Object.fromEntries(pod.containers[0]!.env.map((e) => [e.name, e.value]));
    expect(env).toEqual(
      expect.objectContaining({
        CLUSTER_NAME: HOSTED.infraID,
        AWS_REGION: HOSTED.region,
        AWS_ROLE_ARN: ROLE,
        HTTPS_PROXY: 'http://proxy.mgmt:3128',
        CLUSTER_ENDPOINT: 'https://api.alpha.hcp.example.com:443',
      }),
    );
    expect(pod.initContainers[0]!.image).toBe(CPO_IMAGE);
    // HyperShift's own operator and operand are not there, and nothing is in the guest's name.
    expect(
      cluster.management.get('apps/v1', 'Deployment', 'karpenter', HOSTED.hcpNamespace),
    ).toBeUndefined();
    expect(cluster.guest.get('v1', 'ServiceAccount', 'karpenter', 'kube-system')).toBeDefined();
    expect(
      cluster.guest.get(
        'rbac.authorization.k8s.io/v1',
        'ClusterRole',
        'karpenter-fleet:hosted-karpenter',
      ),
    ).toBeDefined();
    expect(
      cluster.guest.get(
        'karpenter.hypershift.openshift.io/v1',
        'OpenshiftEC2NodeClass',
        'karpenter-fleet',
      ),
    ).toBeDefined();
    expect(cluster.guest.get('karpenter.sh/v1', 'NodePool', 'general')).toBeDefined();
    expect(hcp()?.metadata?.finalizers).toContain(CONVERGED_FINALIZER);
    // No user-data Secret yet: no EC2NodeClass, and the NodeClass says why.
    expect(condition(result, 'NodeClassesReady')).toEqual(
      expect.objectContaining({ status: 'False', reason: 'UserDataSecretNotFound' }),
    );
    expect(
      cluster.guest.get('karpenter.k8s.aws/v1', 'EC2NodeClass', 'karpenter-fleet'),
    ).toBeUndefined();
    const source = cluster.guest.get(
      'karpenter.hypershift.openshift.io/v1',
      'OpenshiftEC2NodeClass',
      'karpenter-fleet',
    );
    expect((source?.status as { conditions: unknown[] }).conditions).toEqual([
      expect.objectContaining({ type: 'Ready', status: 'False', reason: 'UserDataSecretNotFound' }),
    ]);
    expect(result.requeue).toBe(true);
  });

  it('with the user-data Secret: the EC2NodeClass is derived, an SRE override flows through, a guest admin’s direct edit is denied', async () => {
    cluster.management.seed([userDataSecret()]);
    cluster.management.setDeploymentAvailable(HOSTED.hcpNamespace, CONVERGED_OPERAND_NAME);
    const r = runtime();
    const result = await r.apply(order(2, enabled));
    expect(condition(result, 'Available')).toEqual(
      expect.objectContaining({ status: 'True', reason: 'AsExpected' }),
    );
    const ec2 = cluster.guest.get('karpenter.k8s.aws/v1', 'EC2NodeClass', 'karpenter-fleet');
    expect(ec2?.spec).toEqual(
      expect.objectContaining({
        amiFamily: 'Custom',
        amiSelectorTerms: [{ id: 'ami-0rhcos4213west2001' }],
        instanceProfile: 'alpha-k7m2x-karpenter-worker',
        tags: { 'cost-center': '5120', team: 'ml' },
      }),
    );

    const adminToken = cluster.guest.addUser('guest-admin', ['system:masters']);
    const kc = new KubeConfig();
    kc.loadFromString(cluster.guest.kubeconfigYaml('default', adminToken));
    const admin = new ClusterClient(kc);
    const edit = admin.mergePatch({
      apiVersion: 'karpenter.k8s.aws/v1',
      kind: 'EC2NodeClass',
      metadata: { name: 'karpenter-fleet' },
      spec: { instanceProfile: 'something-else' },
    });
    const denied = await edit.then(
      () => 'allowed',
      (err: unknown) => describeKubeError(err),
    );
    expect(denied).toMatch(
      /karpenter-fleet-ec2nodeclass-derived.*change the OpenshiftEC2NodeClass instead/,
    );
    // The OpenshiftEC2NodeClass is the guest admin's to change (an SRE's through the fleet).
    expect(
      (
        cluster.guest.get('karpenter.k8s.aws/v1', 'EC2NodeClass', 'karpenter-fleet')?.spec as {
          instanceProfile: string;
        }
      ).instanceProfile,
    ).toBe('alpha-k7m2x-karpenter-worker');
  });

  it('status.autoNode counts Karpenter’s nodes, NodeClaims and their vCPUs as HyperShift does', async () => {
    cluster.guest.seed([
      {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: 'ip-10-0-1-5', labels: { 'karpenter.sh/nodepool': 'general' } },
      },
      {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodeClaim',
        metadata: { name: 'general-abcde', labels: { 'karpenter.sh/nodepool': 'general' } },
        spec: {
          nodeClassRef: {
            group: 'karpenter.k8s.aws',
            kind: 'EC2NodeClass',
            name: 'karpenter-fleet',
          },
          requirements: [],
        },
        status: { nodeName: 'ip-10-0-1-5', capacity: { cpu: '4' } },
      },
      {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodeClaim',
        metadata: { name: 'general-fghij', labels: { 'karpenter.sh/nodepool': 'general' } },
        spec: {
          nodeClassRef: {
            group: 'karpenter.k8s.aws',
            kind: 'EC2NodeClass',
            name: 'karpenter-fleet',
          },
          requirements: [],
        },
      },
    ]);
    await runtime().apply(order(3, enabled));
    expect((hcp()?.status as { autoNode: unknown }).autoNode).toEqual({
      nodeCount: 1,
      nodeClaimCount: 2,
      vcpus: 4,
    });
  });

  it('CSRs of a Karpenter node in the guest are approved with the fleet’s rules; the Node joins', async () => {
    const r = runtime();
    r.start();
    await r.apply(order(4, enabled));
    const sim = new NodeLaunchSimulator({
      kube: cluster.guest,
      ec2: cluster.ec2,
      zone: `${HOSTED.region}a`,
      karpenterUser: {
        username: 'system:serviceaccount:kube-system:karpenter',
        groups: [
          'system:serviceaccounts',
          'system:serviceaccounts:kube-system',
          'system:authenticated',
        ],
      },
      approvalTimeoutMs: 20_000,
    });
    const node = await sim.launch('general');
    expect(cluster.guest.get('v1', 'Node', node.nodeName)).toBeDefined();
    // The serving CSR can race the NodeClaim watch (a waiting NoNodeClaim first); the last word
    // on each is the approval, with the instance checked against EC2.
    for (const csr of [node.clientCsr, node.servingCsr])
      await eventually(
        () =>
          r.approver
            ?.unsentDecisions()
            .filter((d) => d.csrName === csr)
            .find((d) => d.decision === 'Approved' && d.reason === 'KarpenterCSRApprove'),
        { timeoutMs: 10_000, what: `${csr} approved by the sidecar` },
      );
    expect(cluster.ec2.requestLog.some((e) => e.action === 'DescribeInstances')).toBe(true);
    // Karpenter's node is gone again (the deletion tests count the fixture's NodeClaims only).
    cluster.guest.delete('karpenter.sh/v1', 'NodeClaim', node.nodeClaim);
    cluster.guest.patch('karpenter.sh/v1', 'NodeClaim', node.nodeClaim, undefined, {
      metadata: { finalizers: null },
    });
  }, 30_000);

  it('across a control plane upgrade: AMI and user data held while it runs, so no NodeClaim drifts before it completes', async () => {
    const OLD_AMI = 'ami-0rhcos4213west2001';
    const NEW_AMI = 'ami-0rhcos4215west2001';
    cluster.guest.seed([
      {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodeClaim',
        metadata: { name: 'general-old', labels: { 'karpenter.sh/nodepool': 'general' } },
        spec: {
          nodeClassRef: {
            group: 'karpenter.k8s.aws',
            kind: 'EC2NodeClass',
            name: 'karpenter-fleet',
          },
          requirements: [],
        },
        status: { imageID: OLD_AMI },
      },
    ]);
    const ec2NodeClass = () =>
      cluster.guest.get('karpenter.k8s.aws/v1', 'EC2NodeClass', 'karpenter-fleet')!.spec as {
        amiSelectorTerms: { id: string }[];
        userData: string;
      };
    // Karpenter's AMI drift: a NodeClaim whose image its EC2NodeClass no longer selects.
    const drifted = () => {
      const ids = ec2NodeClass().amiSelectorTerms.map((t) => t.id);
      return cluster.guest
        .list('karpenter.sh/v1', 'NodeClaim')
        .filter((c) => {
          const image = (c.status as { imageID?: string } | undefined)?.imageID;
          return image !== undefined && !ids.includes(image);
        })
        .map((c) => c.metadata?.name);
    };
    const before = ec2NodeClass();
    const history = (state: string) => ({
      desired: {
        version: '4.21.5',
        image: 'quay.io/openshift-release-dev/ocp-release:4.21.5-x86_64',
      },
      history: [
        {
          version: '4.21.5',
          image: 'quay.io/openshift-release-dev/ocp-release:4.21.5-x86_64',
          state,
          startedTime: '2026-12-01T10:00:00Z',
          // Null while the upgrade runs (HyperShift's API: required, nullable).
          completionTime: state === 'Completed' ? '2026-12-01T10:47:00Z' : null,
          verified: true,
        },
        {
          version: '4.21.3',
          image: 'quay.io/openshift-release-dev/ocp-release:4.21.3-x86_64',
          state: 'Completed',
          startedTime: '2026-11-02T10:00:00Z',
          completionTime: '2026-11-02T10:41:00Z',
          verified: true,
        },
      ],
      observedGeneration: 2,
    });
    // The upgrade starts; HyperShift's pipeline writes the new release's AMI and user data.
    cluster.management.patchStatus(HC_API, 'HostedControlPlane', 'alpha', HOSTED.hcpNamespace, {
      versionStatus: history('Partial'),
    });
    const secret = userDataSecret();
    cluster.management.patch('v1', 'Secret', secret.metadata.name, HOSTED.hcpNamespace, {
      metadata: { labels: { 'hypershift.openshift.io/ami': NEW_AMI } },
      data: {
        value: Buffer.from('{"ignition":{"version":"3.2.0"},"release":"4.21.5"}').toString(
          'base64',
        ),
      },
    });
    const r = runtime();
    const during = await r.apply(order(5, enabled));
    expect(condition(during, 'UpgradeDriftHeld')).toEqual(
      expect.objectContaining({ status: 'True', reason: 'ControlPlaneUpdating' }),
    );
    expect(ec2NodeClass().amiSelectorTerms).toEqual([{ id: OLD_AMI }]);
    expect(ec2NodeClass().userData).toBe(before.userData);
    expect(drifted()).toEqual([]);

    // The upgrade completes: the EC2NodeClass moves, and Karpenter's NodeClaim drifts now.
    cluster.management.patchStatus(HC_API, 'HostedControlPlane', 'alpha', HOSTED.hcpNamespace, {
      versionStatus: history('Completed'),
    });
    const after = await r.apply(order(5, enabled));
    expect(condition(after, 'UpgradeDriftHeld')).toEqual(
      expect.objectContaining({ status: 'False', reason: 'AsExpected' }),
    );
    expect(ec2NodeClass().amiSelectorTerms).toEqual([{ id: NEW_AMI }]);
    expect(ec2NodeClass().userData).toContain('4.21.5');
    expect(drifted()).toEqual(['general-old']);
    cluster.guest.delete('karpenter.sh/v1', 'NodeClaim', 'general-old');
  });

  it('disabling: the fleet’s guest objects first, the operand kept while NodeClaims are left, then removed and the finalizer released', async () => {
    const r = runtime();
    const waiting = await r.apply(order(6, { webIdentityRoleArn: ROLE }));
    expect(condition(waiting, 'Progressing')).toEqual(
      expect.objectContaining({ status: 'True', reason: 'WaitingForNodeClaims' }),
    );
    expect(cluster.guest.list('karpenter.sh/v1', 'NodePool')).toEqual([]);
    expect(
      cluster.management.get('apps/v1', 'Deployment', CONVERGED_OPERAND_NAME, HOSTED.hcpNamespace),
    ).toBeDefined();
    // Karpenter removes its NodeClaims.
    for (const claim of cluster.guest.list('karpenter.sh/v1', 'NodeClaim'))
      cluster.guest.delete('karpenter.sh/v1', 'NodeClaim', claim.metadata!.name!);
    const done = await r.apply(order(6, { webIdentityRoleArn: ROLE }));
    expect(condition(done, 'Available')).toEqual(
      expect.objectContaining({ status: 'True', reason: 'KarpenterDisabled' }),
    );
    expect(
      cluster.management.get('apps/v1', 'Deployment', CONVERGED_OPERAND_NAME, HOSTED.hcpNamespace),
    ).toBeUndefined();
    expect(cluster.guest.list('karpenter.k8s.aws/v1', 'EC2NodeClass')).toEqual([]);
    expect(
      cluster.guest.get(
        'admissionregistration.k8s.io/v1',
        'ValidatingAdmissionPolicy',
        'karpenter-fleet-ec2nodeclass-derived',
      ),
    ).toBeUndefined();
    expect(hcp()?.metadata?.finalizers ?? []).not.toContain(CONVERGED_FINALIZER);
    // The CRDs stay (Karpenter's objects of other owners may use them).
    expect(
      cluster.guest.get(
        'apiextensions.k8s.io/v1',
        'CustomResourceDefinition',
        'nodeclaims.karpenter.sh',
      ),
    ).toBeDefined();
    // Enabled again for what follows.
    await r.apply(order(7, enabled));
    expect(hcp()?.metadata?.finalizers).toContain(CONVERGED_FINALIZER);
  });

  it('deletion with the guest API server unreachable: the finalizer is held through the grace period, then released, the reason reported', async () => {
    const path = join(tmp, 'unreachable.kubeconfig');
    const kc = cluster.guest
      .kubeconfigYaml()
      .replace(/https:\/\/127\.0\.0\.1:\d+/, 'https://127.0.0.1:1');
    writeFileSync(path, kc);
    cluster.management.delete(HC_API, 'HostedControlPlane', 'alpha', HOSTED.hcpNamespace);
    expect(hcp()?.metadata?.deletionTimestamp).toBeDefined();
    // Within the grace period one failure holds the finalizer: it may be a passing timeout.
    const held = await runtime(path, 60_000).apply(order(4, enabled));
    expect(condition(held, 'Progressing')).toEqual(
      expect.objectContaining({ status: 'True', reason: 'GuestUnreachable' }),
    );
    expect(hcp()?.metadata?.finalizers).toContain(CONVERGED_FINALIZER);
    // Unreachable past the grace period: released, its nodes left to the infrastructure.
    const result = await runtime(path, 0).apply(order(4, enabled));
    expect(condition(result, 'Progressing')).toEqual(
      expect.objectContaining({ status: 'False', reason: 'GuestUnreachable' }),
    );
    expect(hcp()).toBeUndefined();
  });

  it('deletion: NodePools first, then NodeClaims forced by Karpenter’s termination annotation; the finalizer is released once none is left', async () => {
    // A new HostedControlPlane; enabling puts the finalizer back.
    cluster.management.seed(hostedFixtureObjects().filter((o) => o.kind === 'HostedControlPlane'));
    await runtime().apply(order(5, enabled));
    expect(hcp()?.metadata?.finalizers).toContain(CONVERGED_FINALIZER);
    // A NodeClaim Karpenter cannot finish (its finalizer stays until Karpenter removes it).
    cluster.guest.seed([
      {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodeClaim',
        metadata: {
          name: 'general-abcde',
          labels: { 'karpenter.sh/nodepool': 'general' },
          finalizers: ['karpenter.sh/termination'],
        },
        spec: {
          nodeClassRef: {
            group: 'karpenter.k8s.aws',
            kind: 'EC2NodeClass',
            name: 'karpenter-fleet',
          },
          requirements: [],
        },
      },
    ]);
    cluster.management.delete(HC_API, 'HostedControlPlane', 'alpha', HOSTED.hcpNamespace);

    const r = runtime();
    const first = await r.apply(order(6, enabled));
    expect(condition(first, 'Progressing')).toEqual(
      expect.objectContaining({ status: 'True', reason: 'DeletingNodePools' }),
    );
    expect(cluster.guest.list('karpenter.sh/v1', 'NodePool')).toEqual([]);
    const second = await r.apply(order(6, enabled));
    expect(condition(second, 'Progressing')).toEqual(
      expect.objectContaining({ status: 'True', reason: 'WaitingForNodeClaims' }),
    );
    const third = await r.apply(order(6, enabled));
    expect(condition(third, 'Progressing')?.reason).toBe('WaitingForNodeClaims');
    const stuck = cluster.guest.get('karpenter.sh/v1', 'NodeClaim', 'general-abcde');
    expect(stuck?.metadata?.deletionTimestamp).toBeDefined();
    expect(stuck?.metadata?.annotations?.[NODECLAIM_TERMINATION_TIMESTAMP]).toBe(
      stuck?.metadata?.deletionTimestamp,
    );
    expect(hcp()?.metadata?.finalizers).toContain(CONVERGED_FINALIZER);
    // Karpenter terminates the instances and drops its finalizers.
    for (const claim of cluster.guest.list('karpenter.sh/v1', 'NodeClaim'))
      cluster.guest.patch('karpenter.sh/v1', 'NodeClaim', claim.metadata!.name!, undefined, {
        metadata: { finalizers: null },
      });
    const last = await r.apply(order(6, enabled));
    expect(condition(last, 'Progressing')).toEqual(
      expect.objectContaining({ status: 'False', reason: 'AsExpected' }),
    );
    expect(hcp()).toBeUndefined();
    expect(
      cluster.management.get('apps/v1', 'Deployment', CONVERGED_OPERAND_NAME, HOSTED.hcpNamespace),
    ).toBeUndefined();
  });

  it('HyperShift’s own operator starting where converged mode runs: the sidecar takes its operand, policy and finalizer away, and writes nothing else', async () => {
    cluster.management.seed(hostedFixtureObjects().filter((o) => o.kind === 'HostedControlPlane'));
    await runtime().apply(order(7, enabled));
    const operand = () =>
      cluster.management.get('apps/v1', 'Deployment', CONVERGED_OPERAND_NAME, HOSTED.hcpNamespace);
    expect(operand()).toBeDefined();
    expect(hcp()?.metadata?.finalizers).toContain(CONVERGED_FINALIZER);
    // An SRE enables HyperShift's AutoNode: its karpenter-operator starts beside the sidecar's.
    cluster.management.seed([
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'karpenter-operator', namespace: HOSTED.hcpNamespace },
        spec: {
          selector: { matchLabels: { app: 'karpenter-operator' } },
          template: {
            metadata: { labels: { app: 'karpenter-operator' } },
            spec: { containers: [{ name: 'operator', image: 'hypershift' }] },
          },
        },
      },
    ]);
    const result = await runtime().apply(order(7, enabled));
    expect(condition(result, 'Degraded')).toEqual(
      expect.objectContaining({ status: 'True', reason: 'ConflictingKarpenterOperator' }),
    );
    expect(operand()).toBeUndefined();
    expect(hcp()?.metadata?.finalizers ?? []).not.toContain(CONVERGED_FINALIZER);
    expect(
      cluster.guest.list('admissionregistration.k8s.io/v1', 'ValidatingAdmissionPolicy'),
    ).toEqual([]);
    expect(
      cluster.management.get('apps/v1', 'Deployment', 'karpenter-operator', HOSTED.hcpNamespace),
    ).toBeDefined();
    cluster.management.delete('apps/v1', 'Deployment', 'karpenter-operator', HOSTED.hcpNamespace);
  });

  it('no Forbidden on the management cluster with only deploy/’s Roles', () => {
    expect(cluster.sidecarAccess.refused()).toEqual([]);
  });
});
