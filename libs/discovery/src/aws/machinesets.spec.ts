import { describe, expect, it } from '@jest/globals';

import { parseAwsInfrastructure } from './infrastructure.js';
import { parseWorkerMachineSet, selectWorkerMachineSet } from './machinesets.js';
import {
  fixtureInfrastructure,
  fixtureObject,
  renamed,
  workerMachineSet,
  type MachineSetFixture,
} from '@fleet/testing';
import type { WorkerMachineSet } from './types.js';

const infraMachineSet = () => fixtureObject<MachineSetFixture>('machineset-infra-us-east-1a.yaml');

const EXPECTED_WORKER_1A: WorkerMachineSet = fixtureInfrastructure().worker;

function providerSpec(ms: MachineSetFixture): Record<string, unknown> {
  return ms.spec.template.spec.providerSpec.value;
}

function parsed(ms: unknown): WorkerMachineSet {
  const result = parseWorkerMachineSet(ms);
  if (!result.ok) throw new Error(`${result.reason}: ${result.message}`);
  return result.value;
}

function failure(ms: unknown): { reason: string; message: string } {
  const result = parseWorkerMachineSet(ms);
  if (result.ok) throw new Error('expected the MachineSet to be rejected');
  return result;
}

describe('selectWorkerMachineSet', () => {
  it('picks the first worker by name and passes over the infra set that sorts before it', () => {
    const all = [
      workerMachineSet('c'),
      infraMachineSet(),
      workerMachineSet('b'),
      workerMachineSet('a'),
    ];
    const selection = selectWorkerMachineSet(all);
    expect(selection.name).toBe('prod-east-7xk2p-worker-us-east-1a');
    expect(selection.machineSet).toBe(all[3]);
    expect(selection.skipped).toEqual([
      { name: 'prod-east-7xk2p-infra-us-east-1a', why: 'role infra' },
    ]);
  });

  it('sorts by name, not by list order or zone', () => {
    const early = renamed(workerMachineSet('c'), 'aaa-worker-us-east-1c');
    expect(selectWorkerMachineSet([workerMachineSet('a'), early]).name).toBe(
      'aaa-worker-us-east-1c',
    );
  });

  it('ignores edge MachineSets, whether by role or by node-role label and taint', () => {
    const byRole = renamed(workerMachineSet('a'), 'a-edge-by-role');
    byRole.spec.template.metadata.labels['machine.openshift.io/cluster-api-machine-role'] = 'edge';
    const byLabel = renamed(workerMachineSet('a'), 'a-edge-by-label');
    byLabel.spec.template.spec.metadata = { labels: { 'node-role.kubernetes.io/edge': '' } };
    byLabel.spec.template.spec.taints = [
      { key: 'node-role.kubernetes.io/edge', effect: 'NoSchedule' },
    ];
    providerSpec(byLabel).placement = { region: 'us-east-1', availabilityZone: 'us-east-1-nyc-1a' };

    const selection = selectWorkerMachineSet([byRole, byLabel, workerMachineSet('b')]);
    expect(selection.name).toBe('prod-east-7xk2p-worker-us-east-1b');
    expect(selection.skipped).toEqual([
      { name: 'a-edge-by-label', why: 'edge nodes (node-role.kubernetes.io/edge)' },
      { name: 'a-edge-by-role', why: 'role edge' },
    ]);
  });

  it('ignores worker-labelled infra MachineSets', () => {
    const infraWorker = renamed(workerMachineSet('a'), 'a-infra-labelled-worker');
    infraWorker.spec.template.spec.metadata = { labels: { 'node-role.kubernetes.io/infra': '' } };
    expect(selectWorkerMachineSet([infraWorker, workerMachineSet('c')]).name).toBe(
      'prod-east-7xk2p-worker-us-east-1c',
    );
  });

  it('ignores GPU MachineSets: by instance type, by the GPU annotation, by a GPU taint', () => {
    const byType = renamed(workerMachineSet('a'), 'a-gpu-g5');
    providerSpec(byType).instanceType = 'g5.2xlarge';
    const byAnnotation = renamed(workerMachineSet('a'), 'a-gpu-annotated');
    byAnnotation.metadata.annotations = { 'machine.openshift.io/GPU': '1' };
    const byTaint = renamed(workerMachineSet('a'), 'a-gpu-tainted');
    byTaint.spec.template.spec.taints = [{ key: 'nvidia.com/gpu', effect: 'NoSchedule' }];
    const p5 = renamed(workerMachineSet('a'), 'a-gpu-p5');
    providerSpec(p5).instanceType = 'p5.48xlarge';

    const selection = selectWorkerMachineSet([
      byType,
      byAnnotation,
      byTaint,
      p5,
      workerMachineSet('b'),
    ]);
    expect(selection.name).toBe('prod-east-7xk2p-worker-us-east-1b');
    expect(selection.skipped.map((s) => s.why)).toEqual([
      'GPU nodes (machine.openshift.io/GPU=1)',
      'GPU nodes (instance type g5.2xlarge)',
      'GPU nodes (instance type p5.48xlarge)',
      'GPU nodes (nvidia.com/gpu)',
    ]);
  });

  it.each(['m7g.xlarge', 'c6gn.2xlarge', 'i4i.xlarge', 'd3.2xlarge', 'm6id.large'])(
    'still accepts the general-purpose family %s',
    (instanceType) => {
      const ms = renamed(workerMachineSet('a'), 'a-general');
      providerSpec(ms).instanceType = instanceType;
      expect(selectWorkerMachineSet([ms]).name).toBe('a-general');
    },
  );

  it('reports nothing selected, with reasons, when there is no general-purpose worker', () => {
    const deleting = renamed(workerMachineSet('a'), 'a-deleting');
    (deleting.metadata as { deletionTimestamp?: string }).deletionTimestamp =
      '2026-11-30T00:00:00Z';
    const selection = selectWorkerMachineSet([infraMachineSet(), deleting, { metadata: {} }]);
    expect(selection.machineSet).toBeUndefined();
    expect(selection.skipped).toEqual([
      { name: '#2', why: 'metadata.name: Invalid input: expected string, received undefined' },
      { name: 'a-deleting', why: 'being deleted' },
      { name: 'prod-east-7xk2p-infra-us-east-1a', why: 'role infra' },
    ]);
  });
});

describe('parseWorkerMachineSet', () => {
  it('reads the fixture worker MachineSet (security groups and subnet by tag:Name filters)', () => {
    expect(parsed(workerMachineSet('a'))).toEqual(EXPECTED_WORKER_1A);
  });

  it('reads security groups and subnet given by id', () => {
    const ms = workerMachineSet('a');
    providerSpec(ms).securityGroups = [
      { id: 'sg-0n0de000000000001' },
      { id: 'sg-0lb00000000000002' },
    ];
    providerSpec(ms).subnet = { id: 'subnet-0aa11111111111111' };
    const worker = parsed(ms);
    expect(worker.securityGroups).toEqual([
      { id: 'sg-0n0de000000000001' },
      { id: 'sg-0lb00000000000002' },
    ]);
    expect(worker.subnet).toEqual({ id: 'subnet-0aa11111111111111' });
  });

  it('makes one entry per tag:Name value and lets an id win over filters', () => {
    const ms = workerMachineSet('a');
    providerSpec(ms).securityGroups = [
      { filters: [{ name: 'tag:Name', values: ['node', 'lb'] }] },
      { id: 'sg-0cp00000000000003', filters: [{ name: 'tag:Name', values: ['ignored'] }] },
    ];
    expect(parsed(ms).securityGroups).toEqual([
      { name: 'node' },
      { name: 'lb' },
      { id: 'sg-0cp00000000000003' },
    ]);
  });

  it('accepts the legacy awsproviderconfig.openshift.io/v1beta1 providerSpec', () => {
    const ms = workerMachineSet('b');
    providerSpec(ms).apiVersion = 'awsproviderconfig.openshift.io/v1beta1';
    expect(parsed(ms)).toMatchObject({
      name: 'prod-east-7xk2p-worker-us-east-1b',
      providerSpecAPIVersion: 'awsproviderconfig.openshift.io/v1beta1',
      amiID: 'ami-0c6f2a5e3d1b7a901',
      availabilityZone: 'us-east-1b',
    });
  });

  it('falls back to worker-user-data without a userDataSecret (absent, null or unnamed)', () => {
    for (const value of [undefined, null, {}]) {
      const ms = workerMachineSet('a');
      if (value === undefined) delete providerSpec(ms).userDataSecret;
      else providerSpec(ms).userDataSecret = value;
      expect(parsed(ms).userDataSecretName).toBe('worker-user-data');
    }
    const custom = workerMachineSet('a');
    providerSpec(custom).userDataSecret = { name: 'worker-user-data-managed' };
    expect(parsed(custom).userDataSecretName).toBe('worker-user-data-managed');
  });

  it('reads the volumes as machine-api-provider-aws launches them: the unnamed device is the root, absent fields stay absent', () => {
    const bare = workerMachineSet('a');
    delete providerSpec(bare).blockDevices;
    expect(parsed(bare).rootVolume).toBeUndefined();
    expect(parsed(bare).dataVolumes).toEqual([]);

    const custom = workerMachineSet('a');
    providerSpec(custom).blockDevices = [
      // Named: a data volume, whatever its position.
      { deviceName: '/dev/sdf', ebs: { volumeSize: 300, volumeType: 'io2', iops: 3000 } },
      // No ebs: skipped by the provider.
      { deviceName: '/dev/sdg' },
      {
        ebs: {
          volumeSize: 150,
          volumeType: 'gp3',
          iops: 0,
          throughputMib: 250,
          kmsKey: { id: 'alias/workers', arn: 'arn:aws:kms:us-east-1:111122223333:key/abcd' },
        },
      },
    ];
    const worker = parsed(custom);
    // No `encrypted`: the provider sends none and EC2 applies the account's default.
    expect(worker.rootVolume).toEqual({
      volumeSize: 150,
      volumeType: 'gp3',
      throughputMiB: 250,
      kmsKeyID: 'alias/workers',
    });
    expect(worker.dataVolumes).toEqual([
      { deviceName: '/dev/sdf', volumeSize: 300, volumeType: 'io2', iops: 3000 },
    ]);

    const byArn = workerMachineSet('a');
    providerSpec(byArn).blockDevices = [
      { ebs: { encrypted: false, volumeType: 'gp2', iops: 100, kmsKey: { id: '', arn: 'arn:k' } } },
    ];
    // iops counts only for io1/io2/gp3; an explicit false is kept.
    expect(parsed(byArn).rootVolume).toEqual({
      encrypted: false,
      volumeType: 'gp2',
      kmsKeyID: 'arn:k',
    });
  });

  it('rejects two root volumes (two block devices without deviceName), as the provider does', () => {
    const ms = workerMachineSet('a');
    providerSpec(ms).blockDevices = [{ ebs: { volumeSize: 120 } }, { ebs: { volumeSize: 50 } }];
    expect(failure(ms)).toMatchObject({
      reason: 'InvalidWorkerMachineSet',
      message: expect.stringContaining('blockDevices[1]') as unknown,
    });
  });

  it('keeps the subnet undefined when the providerSpec has none', () => {
    const ms = workerMachineSet('a');
    delete providerSpec(ms).subnet;
    delete providerSpec(ms).tags;
    delete providerSpec(ms).placement;
    const worker = parsed(ms);
    expect(worker.subnet).toBeUndefined();
    expect(worker.tags).toEqual({});
    expect(worker.availabilityZone).toBeUndefined();
  });

  it.each([
    [
      'a missing AMI id',
      (p: Record<string, unknown>) => (p.ami = {}),
      'spec.template.spec.providerSpec.value.ami: given by nothing, not by id; the NodeClass pins the worker AMI by id',
    ],
    [
      'a volume size written as a string',
      (p: Record<string, unknown>) => (p.blockDevices = [{ ebs: { volumeSize: '120' } }]),
      'spec.template.spec.providerSpec.value.blockDevices[0].ebs.volumeSize: Invalid input: expected number, received string',
    ],
    [
      'an instance profile given by ARN only',
      (p: Record<string, unknown>) =>
        (p.iamInstanceProfile = { arn: 'arn:aws:iam::1:instance-profile/x' }),
      "spec.template.spec.providerSpec.value.iamInstanceProfile: given by ARN arn:aws:iam::1:instance-profile/x, not by id; EC2NodeClass.spec.instanceProfile takes the profile's name",
    ],
    [
      'a security group selected by something other than tag:Name',
      (p: Record<string, unknown>) =>
        (p.securityGroups = [
          { id: 'sg-0n0de000000000001' },
          { filters: [{ name: 'vpc-id', values: ['vpc-1'] }] },
        ]),
      'spec.template.spec.providerSpec.value.securityGroups[1]: needs an id or a filter named tag:Name with values',
    ],
    [
      'no security groups',
      (p: Record<string, unknown>) => (p.securityGroups = []),
      'spec.template.spec.providerSpec.value.securityGroups: Too small: expected array to have >=1 items',
    ],
    [
      'a non-AWS providerSpec',
      (p: Record<string, unknown>) => (p.kind = 'AzureMachineProviderSpec'),
      'spec.template.spec.providerSpec.value.kind: Invalid input: expected "AWSMachineProviderConfig"',
    ],
  ])('rejects %s with a message naming the field', (_what, mutate, detail) => {
    const ms = workerMachineSet('a');
    mutate(providerSpec(ms));
    expect(failure(ms)).toEqual({
      ok: false,
      reason: 'InvalidWorkerMachineSet',
      message: `MachineSet openshift-machine-api/prod-east-7xk2p-worker-us-east-1a: ${detail}`,
    });
  });

  it('rejects a MachineSet without a providerSpec', () => {
    const ms = workerMachineSet('a');
    delete (ms.spec.template.spec as { providerSpec?: unknown }).providerSpec;
    expect(failure(ms).message).toBe(
      'MachineSet openshift-machine-api/prod-east-7xk2p-worker-us-east-1a: spec.template.spec.providerSpec.value: not set',
    );
  });
});

describe('parseAwsInfrastructure', () => {
  type Infrastructure = {
    status: Record<string, unknown> & { platformStatus: Record<string, unknown> };
  };
  const infrastructure = () => fixtureObject<Infrastructure>('infrastructure.yaml');

  it('reads the fixture Infrastructure', () => {
    expect(parseAwsInfrastructure(infrastructure())).toEqual({
      ok: true,
      value: {
        infraID: 'prod-east-7xk2p',
        region: 'us-east-1',
        apiServerInternalURI: 'https://api-int.prod-east.example.com:6443',
        controlPlaneTopology: 'HighlyAvailable',
        resourceTags: { 'cost-center': '4411', team: 'platform' },
      },
    });
  });

  it('reports other platforms as UnsupportedPlatform, including the pre-4.2 status.platform', () => {
    const gcp = infrastructure();
    gcp.status.platformStatus = { type: 'GCP', gcp: { region: 'us-central1' } };
    expect(parseAwsInfrastructure(gcp)).toMatchObject({ ok: false, reason: 'UnsupportedPlatform' });

    const old = infrastructure();
    delete (old.status as { platformStatus?: unknown }).platformStatus;
    old.status.platform = 'VSphere';
    expect(parseAwsInfrastructure(old)).toEqual({
      ok: false,
      reason: 'UnsupportedPlatform',
      message:
        'Infrastructure cluster reports platform VSphere; AWS standalone discovery needs platform AWS',
    });
  });

  it('names the missing field of a malformed AWS Infrastructure', () => {
    const noRegion = infrastructure();
    noRegion.status.platformStatus = { type: 'AWS', aws: {} };
    expect(parseAwsInfrastructure(noRegion)).toEqual({
      ok: false,
      reason: 'InvalidInfrastructure',
      message:
        'Infrastructure cluster: status.platformStatus.aws.region: Invalid input: expected string, received undefined',
    });
    expect(parseAwsInfrastructure({ status: {} })).toMatchObject({
      reason: 'InvalidInfrastructure',
      message: 'Infrastructure cluster: status.platformStatus.type is not set',
    });
  });

  it('defaults controlPlaneTopology and resourceTags when the cluster predates them', () => {
    const old = infrastructure();
    delete old.status.controlPlaneTopology;
    old.status.platformStatus = { type: 'AWS', aws: { region: 'eu-west-1' } };
    expect(parseAwsInfrastructure(old)).toMatchObject({
      ok: true,
      value: { region: 'eu-west-1', controlPlaneTopology: 'HighlyAvailable', resourceTags: {} },
    });
  });
});
