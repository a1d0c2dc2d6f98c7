import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AWS_HOSTED_DRIVER, type ClusterDriver } from '@fleet/cloud-provider';
import { KubeClusterObjectReader, type HostedAwsInfrastructure } from '@fleet/discovery';
import {
  HOSTED,
  HyperShiftStandIn,
  startEmulatedHostedCluster,
  type EmulatedHostedCluster,
} from '@fleet/testing';
import { pino } from 'pino';
import type { ReconcileOrder } from '@fleet/contracts';
import { apiServersFor } from '../kube/api-servers.js';
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

describe('HostedRuntime (AutoNode mode)', () => {
  let cluster: EmulatedHostedCluster;
  let hypershift: HyperShiftStandIn;
  const runtimes: HostedRuntime[] = [];

  const runtime = (mode: 'AutoNode' | 'Converged') => {
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
    });
    runtimes.push(r);
    return r;
  };
  const condition = (r: Awaited<ReturnType<HostedRuntime['apply']>>, type: string) =>
    r.conditions.find((c) => c.type === type);

  beforeAll(async () => {
    cluster = await startEmulatedHostedCluster();
    hypershift = new HyperShiftStandIn(cluster);
  }, 30_000);

  afterAll(async () => {
    for (const r of runtimes) await r.stop();
    hypershift?.stop();
    await cluster?.stop();
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

  it('enabled: sets spec.autoNode, then applies the guest objects once HyperShift serves the CRDs', async () => {
    const r = runtime('AutoNode');
    const roleArn = 'arn:aws:iam::111122223333:role/alpha-k7m2x-karpenter';
    const spec = {
      enabled: true,
      webIdentityRoleArn: roleArn,
      nodePools: [{ name: 'general', spec: { template: { spec: { requirements: [] } } } }],
    };
    await r.apply(order(3, spec));
    const result = await r.apply(order(3, spec));
    expect(condition(result, 'Available')).toEqual(
      expect.objectContaining({ status: 'True', reason: 'AsExpected' }),
    );
    expect(cluster.guest.get('karpenter.sh/v1', 'NodePool', 'general')?.metadata?.name).toBe(
      'general',
    );
    expect(cluster.sidecarAccess.refused()).toEqual([]);
  });

  it('converged beside HyperShift’s operator: ConflictingKarpenterOperator', async () => {
    const r = runtime('Converged');
    const result = await r.apply(order(4, { enabled: true }));
    expect(condition(result, 'Degraded')).toEqual(
      expect.objectContaining({ status: 'True', reason: 'ConflictingKarpenterOperator' }),
    );
    expect(result.applied).toBe(0);
  });
});
