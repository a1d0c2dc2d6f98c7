import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderDefaultEC2NodeClass } from '@fleet/cloud-provider';
import {
  Ec2Emulator,
  eventually,
  fixtureInfrastructure,
  fixtureWorldPath,
  freePort,
  loadWorld,
  spawnProcess,
  type KubeObject,
  type RunningProcess,
} from '@fleet/testing';

import { RealControlPlane } from '../support/control-plane/control-plane.js';
import { fixtureCrdFiles } from '../support/fixtures.js';
import { upstreamBinary } from '../support/upstream-binaries.js';

// The real karpenter-provider-aws v1.14.1 (test/upstream) against a real kube-apiserver and the
// EC2 emulator of the standalone AWS fixture: it, not our code, judges the EC2NodeClass the
// fleet renders (issue 39 goes on from here to launching a pending pod's node).

interface Condition {
  type: string;
  status: string;
  reason?: string;
}

describe('karpenter-provider-aws v1.14.1 on the standalone AWS fixture', () => {
  let plane: RealControlPlane;
  let ec2: Ec2Emulator;
  let karpenter: RunningProcess;
  let dir: string;
  const infra = fixtureInfrastructure();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fleet-karpenter-aws-'));
    plane = await RealControlPlane.start({ name: 'karpenter-aws', controllers: false });
    await plane.installCrds(fixtureCrdFiles().filter((f) => f.includes('/karpenter/')));
    ec2 = new Ec2Emulator(loadWorld(fileURLToPath(fixtureWorldPath())));
    await ec2.start();
    await plane.create(
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'openshift-karpenter' } },
      renderDefaultEC2NodeClass(infra, {}) as unknown as KubeObject,
    );
    writeFileSync(join(dir, 'kubeconfig'), plane.kubeconfigYaml());
    const aws = ec2.clientConfig();
    karpenter = spawnProcess({
      name: 'karpenter-provider-aws',
      command: upstreamBinary('karpenter-provider-aws'),
      args: [],
      // What karpenter-operator sets on standalone OpenShift, the cloud being the emulator:
      // static credentials, no instance metadata, no pricing API (ISOLATED_VPC).
      env: {
        PATH: process.env.PATH ?? '',
        HOME: dir,
        KUBECONFIG: join(dir, 'kubeconfig'),
        CLUSTER_NAME: infra.infraID,
        CLUSTER_ENDPOINT: plane.url,
        ISOLATED_VPC: 'true',
        SYSTEM_NAMESPACE: 'openshift-karpenter',
        DISABLE_LEADER_ELECTION: 'true',
        METRICS_PORT: String(await freePort()),
        HEALTH_PROBE_PORT: String(await freePort()),
        AWS_REGION: aws.region,
        AWS_ACCESS_KEY_ID: aws.credentials.accessKeyId,
        AWS_SECRET_ACCESS_KEY: aws.credentials.secretAccessKey,
        AWS_EC2_METADATA_DISABLED: 'true',
        AWS_ENDPOINT_URL_EC2: aws.endpoint,
      },
    });
  }, 180_000);
  afterAll(async () => {
    await karpenter?.stop();
    await ec2?.stop();
    await plane?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("makes the fleet's default EC2NodeClass Ready from its own conditions, validation included", async () => {
    const conditions = await eventually(
      async () => {
        const nodeClass = await plane.get('karpenter.k8s.aws/v1', 'EC2NodeClass', 'default');
        const found = (nodeClass?.status as { conditions?: Condition[] } | undefined)?.conditions;
        return found?.find((c) => c.type === 'Ready')?.status === 'True' ? found : undefined;
      },
      {
        timeoutMs: 90_000,
        intervalMs: 500,
        what: `Ready=True (${karpenter.output().slice(-2000)})`,
      },
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
    const calls = ec2.requestLog.map((r) => `${r.action}${r.params.DryRun ? ' (dry run)' : ''}`);
    expect(calls).toEqual(
      expect.arrayContaining([
        'DescribeInstanceTypes (dry run)',
        'CreateLaunchTemplate',
        'CreateFleet (dry run)',
        'RunInstances (dry run)',
      ]),
    );
    // Nothing else refused: the dry runs, and the lookup of the launch template before it is
    // created (launchtemplate.go ensureLaunchTemplate), are EC2's answers by design.
    const expected = new Set(['DryRunOperation', 'InvalidLaunchTemplateName.NotFoundException']);
    expect(ec2.requestLog.filter((r) => r.errorCode && !expected.has(r.errorCode))).toEqual([]);
  });

  it('resolves the AMI, subnets and security groups the fleet selects, from the EC2 world', async () => {
    const nodeClass = await plane.get('karpenter.k8s.aws/v1', 'EC2NodeClass', 'default');
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
});
