import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { AWS_HOSTED_DRIVER, type ClusterDriver } from '@fleet/cloud-provider';
import { KubeClusterObjectReader, type HostedAwsInfrastructure } from '@fleet/discovery';
import {
  HOSTED,
  HyperShiftStandIn,
  eventually,
  startEmulatedHostedCluster,
  type EmulatedHostedCluster,
} from '@fleet/testing';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { ReconcileOrder } from '@fleet/contracts';
import { apiServersFor } from '../kube/api-servers.js';
import { ClusterClient } from '../kube/cluster-client.js';
import { HostedRuntime } from './hosted-runtime.js';

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

const HC_API = 'hypershift.openshift.io/v1beta1';

describe('HostedRuntime (AutoNode mode)', () => {
  let cluster: EmulatedHostedCluster;
  let hypershift: HyperShiftStandIn;
  const runtimes: HostedRuntime[] = [];

  let tmp: string;
  const runtime = (mode: 'AutoNode' | 'Converged', guestKubeconfigPath?: string) => {
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
      mode,
      hcpNamespace: HOSTED.hcpNamespace,
      log: pino({ level: 'silent' }),
      requeueMs: 200,
      ...(guestKubeconfigPath ? { guestKubeconfigPath } : {}),
    });
    runtimes.push(r);
    return r;
  };
  const condition = (r: Awaited<ReturnType<HostedRuntime['apply']>>, type: string) =>
    r.conditions.find((c) => c.type === type);

  beforeAll(async () => {
    cluster = await startEmulatedHostedCluster();
    hypershift = new HyperShiftStandIn(cluster);
    tmp = mkdtempSync(join(tmpdir(), 'hosted-runtime-'));
  }, 30_000);

  // A runtime keeps requeueing its last order: one left running from an earlier test re-applies
  // that test's spec.autoNode over what the next test set (seen under load in a full run).
  afterEach(async () => {
    for (const r of runtimes.splice(0)) await r.stop();
  });

  afterAll(async () => {
    hypershift?.stop();
    await cluster?.stop();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('disabled: AutoNodeNotConfigured, nothing written', async () => {
    const r = runtime('AutoNode');
    const result = await r.apply(order(1, {}));
    expect(condition(result, 'AutoNodeEnabled')).toEqual(
      expect.objectContaining({ status: 'False', reason: 'AutoNodeNotConfigured' }),
    );
    expect(result.applied).toBe(0);
  });

  it('enabled without a role ARN: Degraded WebIdentityRoleMissing naming the field', async () => {
    const r = runtime('AutoNode');
    const result = await r.apply(order(2, { enabled: true }));
    expect(condition(result, 'Degraded')).toEqual(
      expect.objectContaining({ status: 'True', reason: 'WebIdentityRoleMissing' }),
    );
    expect(condition(result, 'Degraded')?.message).toMatch(/^webIdentityRoleArn: /);
  });

  const roleArn = 'arn:aws:iam::111122223333:role/alpha-k7m2x-karpenter';
  const enabledSpec = {
    enabled: true,
    webIdentityRoleArn: roleArn,
    nodePools: [{ name: 'general', spec: { template: { spec: { requirements: [] } } } }],
  };

  it('enabled: sets spec.autoNode, then applies the guest objects, following a rotated guest kubeconfig', async () => {
    // The mounted hcco-kubeconfig starts out with a token the guest no longer accepts.
    const path = join(tmp, 'guest.kubeconfig');
    writeFileSync(path, cluster.guest.kubeconfigYaml('default', 'rotated-away'));
    const r = runtime('AutoNode', path);
    const refused = await r.apply(order(3, enabledSpec));
    expect(condition(refused, 'Degraded')).toEqual(
      expect.objectContaining({ status: 'True', reason: 'ApplyFailed' }),
    );
    expect(
      (
        cluster.management.get(HC_API, 'HostedCluster', 'alpha', 'clusters')?.spec as {
          autoNode?: unknown;
        }
      ).autoNode,
    ).toEqual({
      provisionerConfig: {
        name: 'Karpenter',
        karpenter: { platform: 'AWS', aws: { roleARN: roleArn } },
      },
    });
    // HyperShift rotates the Secret, the kubelet rewrites the file: no restart needed.
    writeFileSync(path, cluster.guest.kubeconfigYaml());
    const result = await r.apply(order(3, enabledSpec));
    expect(condition(result, 'Available')).toEqual(
      expect.objectContaining({ status: 'True', reason: 'AsExpected' }),
    );
    expect(condition(result, 'Degraded')?.status).toBe('False');
    expect(cluster.guest.get('karpenter.sh/v1', 'NodePool', 'general')?.metadata?.name).toBe(
      'general',
    );
    expect(cluster.sidecarAccess.refused()).toEqual([]);
  });

  it('disabled: NodePools go first, spec.autoNode is cleared once no NodeClaim is left', async () => {
    const r = runtime('AutoNode');
    await r.apply(order(5, enabledSpec));
    cluster.guest.create({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: { name: 'general-abcde' },
      spec: {
        requirements: [],
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'karpenter-fleet' },
      },
    });
    const waiting = await r.apply(order(6, {}));
    expect(condition(waiting, 'Progressing')).toEqual(
      expect.objectContaining({ status: 'True', reason: 'WaitingForNodeClaims' }),
    );
    expect(cluster.guest.get('karpenter.sh/v1', 'NodePool', 'general')).toBeUndefined();
    expect(
      cluster.guest.get(
        'karpenter.hypershift.openshift.io/v1',
        'OpenshiftEC2NodeClass',
        'karpenter-fleet',
      ),
    ).toBeUndefined();
    const hc = () =>
      cluster.management.get(HC_API, 'HostedCluster', 'alpha', 'clusters')?.spec as {
        autoNode?: unknown;
      };
    expect(hc().autoNode).toBeDefined();

    cluster.guest.delete('karpenter.sh/v1', 'NodeClaim', 'general-abcde');
    await r.apply(order(6, {}));
    expect(hc().autoNode).toBeUndefined();
    // HyperShift has removed its Deployments: the next look sees it done.
    const done = await r.apply(order(6, {}));
    expect(condition(done, 'AutoNodeEnabled')).toEqual(
      expect.objectContaining({ status: 'False', reason: 'AutoNodeNotConfigured' }),
    );
    expect(condition(done, 'Progressing')?.status).toBe('False');
    expect(cluster.management.list('apps/v1', 'Deployment', HOSTED.hcpNamespace)).toEqual([]);
  });

  it('disabled: spec.autoNode is cleared only once HyperShift has let the fleet’s OpenshiftEC2NodeClass go (its finalizer), not only its NodeClaims', async () => {
    const r = runtime('AutoNode');
    await r.apply(order(5, enabledSpec));
    // HyperShift's karpenter-operator holds every OpenshiftEC2NodeClass with a finalizer until it
    // has deleted the derived EC2NodeClass (nodeclass/ec2_nodeclass_controller.go, 3ee9615567ac).
    const finalizer = 'hypershift.openshift.io/ec2-nodeclass-finalizer';
    cluster.guest.patch(
      'karpenter.hypershift.openshift.io/v1',
      'OpenshiftEC2NodeClass',
      'karpenter-fleet',
      undefined,
      { metadata: { finalizers: [finalizer] } },
    );
    const hc = () =>
      cluster.management.get(HC_API, 'HostedCluster', 'alpha', 'clusters')?.spec as {
        autoNode?: unknown;
      };
    const waiting = await r.apply(order(6, {}));
    expect(condition(waiting, 'Progressing')).toEqual(
      expect.objectContaining({ status: 'True', reason: 'WaitingForNodeClass' }),
    );
    expect(hc().autoNode).toBeDefined();
    cluster.guest.patch(
      'karpenter.hypershift.openshift.io/v1',
      'OpenshiftEC2NodeClass',
      'karpenter-fleet',
      undefined,
      { metadata: { finalizers: [] } },
    );
    await r.apply(order(6, {}));
    expect(hc().autoNode).toBeUndefined();
  });

  it('converged mode is refused on every HyperShift: ConvergedModeUnsupported, nothing written', async () => {
    await runtime('AutoNode').apply(order(7, enabledSpec));
    const writes: string[] = [];
    const offs = [cluster.management, cluster.guest].map((k) =>
      k.onRequest((e) => {
        if (e.method !== 'GET') writes.push(`${e.method} ${e.path}`);
      }),
    );
    const r = runtime('Converged');
    const result = await r.apply(order(4, { enabled: true }));
    expect(condition(result, 'Degraded')).toEqual(
      expect.objectContaining({ status: 'True', reason: 'ConvergedModeUnsupported' }),
    );
    expect(result.applied).toBe(0);
    for (const off of offs) off();
    expect(writes).toEqual([]);
  });

  it('an autoNode set outside the fleet is left when the fleet has Karpenter disabled', async () => {
    const r = runtime('AutoNode');
    await r.apply(order(8, {}));
    const byHand = {
      provisionerConfig: {
        name: 'Karpenter',
        karpenter: { platform: 'AWS', aws: { roleARN: 'arn:aws:iam::111122223333:role/by-hand' } },
      },
    };
    cluster.management.patch(HC_API, 'HostedCluster', 'alpha', 'clusters', {
      spec: { autoNode: byHand },
    });
    const result = await r.apply(order(9, {}));
    expect(condition(result, 'Available')).toEqual(
      expect.objectContaining({ status: 'True', reason: 'AutoNodeSetOutsideFleet' }),
    );
    expect(
      (
        cluster.management.get(HC_API, 'HostedCluster', 'alpha', 'clusters')?.spec as {
          autoNode?: unknown;
        }
      ).autoNode,
    ).toEqual(byHand);
  });

  it('drift in the guest: a hand edit of the fleet NodePool is put back under CORRECT, left and reported under REPORT', async () => {
    const r = runtime('AutoNode');
    r.start();
    const spec = {
      ...enabledSpec,
      nodePools: [
        {
          name: 'general',
          spec: { template: { spec: { requirements: [] } }, limits: { cpu: '64' } },
        },
      ],
    };
    const cpu = () =>
      (
        cluster.guest.get('karpenter.sh/v1', 'NodePool', 'general')?.spec as
          { limits?: { cpu?: string } } | undefined
      )?.limits?.cpu;
    // HyperShift installs the Karpenter CRDs in the guest once it sees spec.autoNode.
    await eventually(
      async () => ((await r.apply(order(10, spec))) && cpu() === '64') || undefined,
      {
        timeoutMs: 15_000,
        what: 'the fleet NodePool in the guest',
      },
    );
    const path = join(tmp, 'sre.kubeconfig');
    writeFileSync(path, cluster.guest.kubeconfigYaml());
    const sre = ClusterClient.fromKubeconfigFile(path);
    const edit = (value: string) =>
      sre.mergePatch(
        {
          apiVersion: 'karpenter.sh/v1',
          kind: 'NodePool',
          metadata: { name: 'general' },
          spec: { limits: { cpu: value } },
        },
        'sre-hand-edit',
      );
    const drifted = async () => (await r.snapshot())?.conditions.find((c) => c.type === 'Drifted');

    await edit('128');
    const corrected = await eventually(
      async () =>
        cpu() === '64'
          ? (await r.snapshot())?.drift?.find((e) => e.name === 'general' && e.correctedAt)
          : undefined,
      { timeoutMs: 10_000, what: 'the edit put back and reported as corrected' },
    );
    expect(corrected).toMatchObject({
      kind: 'NodePool',
      change: 'Modified',
      fields: [{ path: '.spec.limits.cpu', manager: 'sre-hand-edit' }],
    });
    expect(await drifted()).toMatchObject({ status: 'False', reason: 'Corrected' });

    const report = order(11, { ...spec, driftPolicy: 'REPORT' });
    await r.apply(report);
    await edit('256');
    await eventually(async () => ((await drifted())?.status === 'True' ? true : undefined), {
      timeoutMs: 10_000,
      what: 'Drifted=True under REPORT',
    });
    expect(await drifted()).toMatchObject({ reason: 'LeftInPlace' });
    await r.apply(report);
    await r.idle();
    expect(cpu()).toBe('256');
    // Back to CORRECT puts it back.
    await r.apply(order(12, spec));
    expect(cpu()).toBe('64');
  });
});

describe('HostedRuntime on a HyperShift build that serves OpenshiftEC2NodeClass v1beta1 only (issue 42, point 10)', () => {
  let cluster: EmulatedHostedCluster;
  let hypershift: HyperShiftStandIn;
  let r: HostedRuntime | undefined;

  beforeAll(async () => {
    cluster = await startEmulatedHostedCluster();
    hypershift = new HyperShiftStandIn(cluster, 'v1beta1');
  }, 30_000);
  afterAll(async () => {
    await r?.stop();
    hypershift?.stop();
    await cluster?.stop();
  });

  it('finds the served version by discovery and keeps its class in it; kubelet overrides, which v1beta1 lacks, are refused naming the field', async () => {
    const apiServers = apiServersFor(['management', 'workload'], cluster.sidecarEnv);
    const reader = new KubeClusterObjectReader(apiServers.kubeConfig('management'), 5_000);
    r = new HostedRuntime({
      apiServers,
      driver: AWS_HOSTED_DRIVER.create({
        reader: () => reader,
        env: cluster.sidecarEnv,
      }) as ClusterDriver<HostedAwsInfrastructure>,
      reader,
      mode: 'AutoNode',
      hcpNamespace: HOSTED.hcpNamespace,
      log: pino({ level: 'silent' }),
      requeueMs: 200,
    });
    const enabled = {
      enabled: true,
      webIdentityRoleArn: 'arn:aws:iam::111122223333:role/alpha-k7m2x-karpenter',
      nodePools: [{ name: 'general', spec: { template: { spec: { requirements: [] } } } }],
    };
    // The first pass sets spec.autoNode; HyperShift then installs the CRDs.
    await r.apply(order(1, enabled));
    const result = await eventually(
      async () => {
        const again = await r!.apply(order(1, enabled));
        return again.conditions.some((c) => c.type === 'Available' && c.status === 'True')
          ? again
          : undefined;
      },
      { timeoutMs: 10_000, what: 'Available on the v1beta1 build' },
    );
    expect(result.conditions.find((c) => c.type === 'Degraded')?.status).toBe('False');
    expect(
      cluster.guest.get(
        'karpenter.hypershift.openshift.io/v1beta1',
        'OpenshiftEC2NodeClass',
        'karpenter-fleet',
      )?.metadata?.name,
    ).toBe('karpenter-fleet');
    expect(cluster.guest.get('karpenter.sh/v1', 'NodePool', 'general')).toBeDefined();

    const withKubelet = await r.apply(
      order(2, { ...enabled, nodeClassOverrides: { kubelet: { maxPods: 50 } } }),
    );
    expect(withKubelet.conditions.find((c) => c.type === 'Degraded')).toEqual(
      expect.objectContaining({ status: 'True', reason: 'InvalidDesiredState' }),
    );
    expect(withKubelet.conditions.find((c) => c.type === 'Degraded')?.message).toMatch(
      /^nodeClassOverrides\.kubelet: this HyperShift build serves OpenshiftEC2NodeClass v1beta1/,
    );

    // Disabling finds and removes the v1beta1 class too.
    await r.apply(order(3, {}));
    expect(
      cluster.guest.get(
        'karpenter.hypershift.openshift.io/v1beta1',
        'OpenshiftEC2NodeClass',
        'karpenter-fleet',
      ),
    ).toBeUndefined();
    expect(cluster.sidecarAccess.refused()).toEqual([]);
  });
});
