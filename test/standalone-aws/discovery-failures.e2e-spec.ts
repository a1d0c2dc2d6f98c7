import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import { loadWorld } from '../support/ec2/index.js';
import { fixtureClusterDir } from '../support/fixtures.js';
import type { KubeObject } from '../support/kube-apiserver/index.js';
import { GENERAL_NODEPOOL, startHarness, type Harness } from './harness.js';

const world = loadWorld(join(fixtureClusterDir('ocp-aws-standalone'), 'ec2-world.json'));
const INFRA = ['config.openshift.io/v1', 'Infrastructure', 'cluster'] as const;
const MACHINESET = ['machine.openshift.io/v1beta1', 'MachineSet'] as const;

/**
 * On the fixture cluster, each piece discovery needs is taken away in turn: the sidecar must
 * answer with a Degraded condition naming that piece, never crash, and write nothing (no half
 * NodeClass, no operand). Then the piece is put back and the next one goes.
 */
describe('standalone AWS: discovery failures surface as Degraded reasons', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.stop());

  const nothingWritten = () => {
    expect(h.cluster.kube.get('karpenter.k8s.aws/v1', 'EC2NodeClass', 'default')).toBeUndefined();
    expect(
      h.cluster.kube.get('apps/v1', 'Deployment', 'karpenter', 'openshift-karpenter'),
    ).toBeUndefined();
    expect(h.cluster.kube.get('karpenter.sh/v1', 'NodePool', 'general')).toBeUndefined();
  };
  const degradedWith = async (reason: string) => {
    const result = await h.runtime.apply(h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL] }));
    expect(result.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'Degraded', status: 'True', reason }),
        expect.objectContaining({ type: 'Available', status: 'False', reason }),
      ]),
    );
    expect(result.applied).toBe(0);
    nothingWritten();
  };
  const restore = (objects: KubeObject[]) =>
    h.cluster.kube.seed(
      objects.map((o) => ({
        ...o,
        metadata: {
          name: o.metadata!.name,
          namespace: o.metadata!.namespace,
          labels: o.metadata!.labels,
        },
      })),
    );

  it('InfrastructureNotFound', async () => {
    const infra = h.cluster.kube.get(...INFRA)!;
    h.cluster.kube.delete(...INFRA);
    await degradedWith('InfrastructureNotFound');
    restore([infra]);
  });

  it('NoWorkerMachineSet', async () => {
    const workers = h.cluster.kube
      .list(...MACHINESET, 'openshift-machine-api')
      .filter((m) => m.metadata?.name?.includes('worker'));
    for (const m of workers)
      h.cluster.kube.delete(...MACHINESET, m.metadata!.name!, 'openshift-machine-api');
    await degradedWith('NoWorkerMachineSet');
    restore(workers);
  });

  it('UserDataSecretNotFound', async () => {
    const secret = h.cluster.kube.get('v1', 'Secret', 'worker-user-data', 'openshift-machine-api')!;
    h.cluster.kube.delete('v1', 'Secret', 'worker-user-data', 'openshift-machine-api');
    await degradedWith('UserDataSecretNotFound');
    restore([secret]);
  });

  it('NoTaggedSubnets', async () => {
    for (const s of world.subnets ?? []) h.cluster.ec2.removeSubnet(s.SubnetId);
    await degradedWith('NoTaggedSubnets');
    for (const s of world.subnets ?? []) h.cluster.ec2.addSubnet(s);
  });

  it('AMINotFound', async () => {
    for (const i of world.images ?? []) h.cluster.ec2.removeImage(i.ImageId);
    await degradedWith('AMINotFound');
    for (const i of world.images ?? []) h.cluster.ec2.addImage(i);
  });

  it('SecurityGroupNotFound', async () => {
    for (const g of world.securityGroups ?? []) h.cluster.ec2.removeSecurityGroup(g.GroupId);
    await degradedWith('SecurityGroupNotFound');
    for (const g of world.securityGroups ?? []) h.cluster.ec2.addSecurityGroup(g);
  });

  it('with every piece back, the same order applies', async () => {
    const result = await h.runtime.apply(h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL] }));
    expect(result.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'Available', status: 'True', reason: 'AsExpected' }),
      ]),
    );
    expect(h.cluster.kube.get('karpenter.k8s.aws/v1', 'EC2NodeClass', 'default')).toBeDefined();
  });
});
