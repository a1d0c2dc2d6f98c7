import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { EC2Client } from '@aws-sdk/client-ec2';

import {
  Ec2Emulator,
  fixtureInfrastructure,
  fixtureObjects,
  fixtureWorldPath,
  loadWorld,
} from '@fleet/testing';
import { discoverAwsStandalone } from './standalone.js';
import { InMemoryClusterObjectReader, type ClusterObjectReader } from '../cluster-reader.js';
import type { DiscoveryResult } from '../types.js';
import type { AwsStandaloneInfrastructure } from './types.js';

type KubeObject = Record<string, unknown> & {
  kind?: string;
  metadata?: { name?: string };
  status?: Record<string, unknown>;
  stringData?: Record<string, string>;
};

const EXPECTED_USER_DATA =
  '{"ignition":{"config":{"merge":[{"source":"https://api-int.prod-east.example.com:22623/config/worker"}]},"security":{"tls":{"certificateAuthorities":[{"source":"data:text/plain;charset=utf-8;base64,LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSURFRENDQWZpZ0F3SUJBZ0lJVGVzdENBPT0KLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="}]}},"version":"3.2.0"}}';

// What discovery must yield is written once, in test support; the user data is spelled out here
// so that a decoding slip in the fixture reader could not hide one in discovery.
const EXPECTED: AwsStandaloneInfrastructure = {
  ...fixtureInfrastructure(),
  userData: EXPECTED_USER_DATA,
};

describe('discoverAwsStandalone against the EC2 emulator', () => {
  const world = loadWorld(fixtureWorldPath());
  const emulator = new Ec2Emulator(world);
  let ec2: EC2Client;

  beforeAll(async () => {
    await emulator.start();
    ec2 = new EC2Client({ ...emulator.clientConfig(), maxAttempts: 1 });
  });
  afterAll(async () => {
    ec2.destroy();
    await emulator.stop();
  });
  beforeEach(() => {
    emulator.seed(world);
    emulator.clearRequestLog();
  });

  /** The fixture cluster, with `edit` applied to a copy of its objects. */
  function cluster(edit: (objects: KubeObject[]) => KubeObject[] = (o) => o): ClusterObjectReader {
    return new InMemoryClusterObjectReader(edit(structuredClone(fixtureObjects())));
  }

  const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

  const without = (kind: string, name?: string) => (objects: KubeObject[]) =>
    objects.filter((o) => !(o.kind === kind && (name === undefined || o.metadata?.name === name)));

  function failure(result: DiscoveryResult<AwsStandaloneInfrastructure>) {
    if (result.ok) throw new Error('expected discovery to fail');
    return { reason: result.reason, message: result.message };
  }

  it('discovers the fixture cluster completely through the real EC2 client', async () => {
    const result = await discoverAwsStandalone({ reader: cluster(), ec2 });
    expect(result).toEqual({
      ok: true,
      infrastructure: EXPECTED,
      conditions: [
        {
          type: 'WorkerMachineSetSelected',
          status: 'True',
          reason: 'OthersPassedOver',
          message:
            'the default EC2NodeClass is copied from MachineSet openshift-machine-api/prod-east-7xk2p-worker-us-east-1a; passed over: prod-east-7xk2p-infra-us-east-1a (role infra)',
        },
      ],
    });
    expect(emulator.actions).toEqual([
      'DescribeSubnets',
      'DescribeSecurityGroups',
      'DescribeImages',
    ]);
  });

  it("names the root volume's device after the AMI's RootDeviceName, as machine-api-provider-aws does", async () => {
    const image = world.images?.find((i) => i.ImageId === 'ami-0c6f2a5e3d1b7a901');
    emulator.removeImage('ami-0c6f2a5e3d1b7a901');
    emulator.addImage({ ...image!, RootDeviceName: '/dev/sda1' });
    const result = await discoverAwsStandalone({ reader: cluster(), ec2 });
    expect(result.ok && result.infrastructure.rootDeviceName).toBe('/dev/sda1');
  });

  it('builds the EC2 client for the region read from the Infrastructure', async () => {
    const regions: string[] = [];
    const result = await discoverAwsStandalone({
      reader: cluster(),
      ec2: (region) => {
        regions.push(region);
        return ec2;
      },
    });
    expect(result.ok).toBe(true);
    expect(regions).toEqual(['us-east-1']);
  });

  it('resolves security groups given by id', async () => {
    const reader = cluster((objects) => {
      for (const o of objects) {
        if (o.kind !== 'MachineSet') continue;
        const spec = (
          o.spec as { template: { spec: { providerSpec: { value: Record<string, unknown> } } } }
        ).template.spec.providerSpec.value;
        spec.securityGroups = [
          { id: 'sg-0lb00000000000002' },
          { filters: [{ name: 'tag:Name', values: ['prod-east-7xk2p-node'] }] },
        ];
      }
      return objects;
    });
    const result = await discoverAwsStandalone({ reader, ec2 });
    if (!result.ok) throw new Error(result.message);
    expect(result.infrastructure.securityGroupIDs).toEqual([
      'sg-0lb00000000000002',
      'sg-0n0de000000000001',
    ]);
  });

  it('InfrastructureNotFound without Infrastructure/cluster', async () => {
    expect(
      failure(await discoverAwsStandalone({ reader: cluster(without('Infrastructure')), ec2 })),
    ).toEqual({
      reason: 'InfrastructureNotFound',
      message:
        'Infrastructure cluster (config.openshift.io/v1) not found; is this an OpenShift cluster?',
    });
    expect(emulator.actions).toEqual([]);
  });

  it('UnsupportedPlatform on a non-AWS cluster', async () => {
    const reader = cluster((objects) => {
      const infra = objects.find((o) => o.kind === 'Infrastructure')!;
      infra.status!.platformStatus = { type: 'Azure', azure: { resourceGroupName: 'rg' } };
      return objects;
    });
    expect(failure(await discoverAwsStandalone({ reader, ec2 }))).toEqual({
      reason: 'UnsupportedPlatform',
      message:
        'Infrastructure cluster reports platform Azure; AWS standalone discovery needs platform AWS',
    });
  });

  it('NoWorkerMachineSet when only the infra MachineSet is left', async () => {
    const reader = cluster((objects) =>
      objects.filter((o) => !(o.kind === 'MachineSet' && o.metadata?.name?.includes('-worker-'))),
    );
    expect(failure(await discoverAwsStandalone({ reader, ec2 }))).toEqual({
      reason: 'NoWorkerMachineSet',
      message:
        'no MachineSet in openshift-machine-api is labelled machine.openshift.io/cluster-api-machine-role=worker for general-purpose nodes; passed over: prod-east-7xk2p-infra-us-east-1a (role infra)',
    });
    expect(
      failure(await discoverAwsStandalone({ reader: cluster(without('MachineSet')), ec2 })).message,
    ).toMatch(/the namespace has no MachineSets$/);
  });

  type ProviderSpecHolder = {
    spec: {
      template: {
        metadata: { labels: Record<string, string> };
        spec: { providerSpec: { value: Record<string, unknown> } };
      };
    };
  };
  const providerSpecOf = (o: KubeObject) =>
    (o as unknown as ProviderSpecHolder).spec.template.spec.providerSpec.value;
  const workerSets = (objects: KubeObject[]) =>
    objects.filter((o) => o.kind === 'MachineSet' && o.metadata?.name?.includes('-worker-'));

  it('InvalidWorkerMachineSet names the malformed field when no worker set can be used', async () => {
    const reader = cluster((objects) => {
      for (const ms of workerSets(objects)) delete providerSpecOf(ms).instanceType;
      return objects;
    });
    const result = failure(await discoverAwsStandalone({ reader, ec2 }));
    expect(result.reason).toBe('InvalidWorkerMachineSet');
    expect(result.message).toMatch(
      /^MachineSet openshift-machine-api\/prod-east-7xk2p-worker-us-east-1a: spec.template.spec.providerSpec.value.instanceType: Invalid input: expected string, received undefined; no other worker MachineSet could be used: prod-east-7xk2p-worker-us-east-1b \(InvalidWorkerMachineSet: .*instanceType.*\), prod-east-7xk2p-worker-us-east-1c \(/,
    );
  });

  it('passes over worker sets whose AMI (by ARN or filters) or instance profile (by ARN) cannot be used, uses the next and says why', async () => {
    const reader = cluster((objects) => {
      const [a, b] = workerSets(objects).sort((x, y) =>
        String(x.metadata?.name).localeCompare(String(y.metadata?.name)),
      );
      providerSpecOf(a!).ami = { arn: 'arn:aws:ec2:us-east-1::image/ami-0c6f2a5e3d1b7a901' };
      providerSpecOf(b!).iamInstanceProfile = {
        arn: 'arn:aws:iam::111122223333:instance-profile/prod-east-7xk2p-worker-profile',
      };
      return objects;
    });
    const result = await discoverAwsStandalone({ reader, ec2 });
    if (!result.ok) throw new Error(result.message);
    expect(result.infrastructure.worker.name).toBe('prod-east-7xk2p-worker-us-east-1c');
    expect(result.infrastructure.workerSelection).toEqual({
      chosen: 'prod-east-7xk2p-worker-us-east-1c',
      passedOver: [
        { name: 'prod-east-7xk2p-infra-us-east-1a', why: 'role infra' },
        {
          name: 'prod-east-7xk2p-worker-us-east-1a',
          why: expect.stringMatching(
            /^InvalidWorkerMachineSet: .*providerSpec.value.ami: given by ARN arn:aws:ec2:us-east-1::image\/ami-0c6f2a5e3d1b7a901, not by id/,
          ) as unknown as string,
        },
        {
          name: 'prod-east-7xk2p-worker-us-east-1b',
          why: expect.stringMatching(
            /^InvalidWorkerMachineSet: .*providerSpec.value.iamInstanceProfile: given by ARN .*instance-profile\/prod-east-7xk2p-worker-profile, not by id/,
          ) as unknown as string,
        },
      ],
    });
    expect(result.conditions).toEqual([
      expect.objectContaining({
        type: 'WorkerMachineSetSelected',
        status: 'True',
        reason: 'OthersPassedOver',
        message: expect.stringMatching(
          /^the default EC2NodeClass is copied from MachineSet openshift-machine-api\/prod-east-7xk2p-worker-us-east-1c; passed over: prod-east-7xk2p-infra-us-east-1a \(role infra\); prod-east-7xk2p-worker-us-east-1a \(InvalidWorkerMachineSet: .*ami: given by ARN/,
        ) as unknown,
      }),
    ]);

    // AMI by filters is passed over the same way.
    const byFilters = cluster((objects) => {
      const first = workerSets(objects).find((o) => o.metadata?.name?.endsWith('1a'));
      providerSpecOf(first!).ami = { filters: [{ name: 'name', values: ['rhcos-*'] }] };
      return objects;
    });
    const next = await discoverAwsStandalone({ reader: byFilters, ec2 });
    expect(next.ok && next.infrastructure.worker.name).toBe('prod-east-7xk2p-worker-us-east-1b');
    expect(next.ok && next.infrastructure.workerSelection.passedOver[1]?.why).toMatch(
      /ami: given by filters, not by id/,
    );
  });

  it('never chooses a Windows MachineSet: by the os-id label, the windows-user-data Secret or PowerShell user data', async () => {
    const reader = cluster((objects) => {
      const base = workerSets(objects).find((o) => o.metadata?.name?.endsWith('1a'))!;
      const copy = (name: string) => {
        const o = structuredClone(base);
        o.metadata = { ...o.metadata, name };
        return o;
      };
      const byLabel = copy('a-windows-by-label');
      (byLabel as unknown as ProviderSpecHolder).spec.template.metadata.labels[
        'machine.openshift.io/os-id'
      ] = 'Windows';
      const bySecretName = copy('a-windows-by-secret');
      providerSpecOf(bySecretName).userDataSecret = { name: 'windows-user-data' };
      const byContent = copy('a-windows-by-content');
      providerSpecOf(byContent).userDataSecret = { name: 'custom-user-data' };
      const powershell: KubeObject = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: 'custom-user-data',
          namespace: 'openshift-machine-api',
        } as KubeObject['metadata'],
        stringData: { userData: '<powershell>\nStart-Service sshd\n</powershell>' },
      };
      return [...objects, byLabel, bySecretName, byContent, powershell];
    });
    const result = await discoverAwsStandalone({ reader, ec2 });
    if (!result.ok) throw new Error(result.message);
    expect(result.infrastructure.worker.name).toBe('prod-east-7xk2p-worker-us-east-1a');
    expect(result.infrastructure.workerSelection.passedOver).toEqual([
      {
        name: 'a-windows-by-label',
        why: 'Windows nodes (machine.openshift.io/os-id=Windows)',
      },
      {
        name: 'a-windows-by-secret',
        why: 'Windows nodes (user data Secret windows-user-data)',
      },
      { name: 'prod-east-7xk2p-infra-us-east-1a', why: 'role infra' },
      {
        name: 'a-windows-by-content',
        why: 'WindowsUserData: Secret openshift-machine-api/custom-user-data (userDataSecret of MachineSet a-windows-by-content) holds Windows (PowerShell) user data, not Ignition',
      },
    ]);
  });

  it('does not switch sets on a failed lookup: CloudLookupFailed stops discovery', async () => {
    emulator.injectError('DescribeSecurityGroups', {
      code: 'RequestLimitExceeded',
      message: 'Request limit exceeded.',
    });
    expect(failure(await discoverAwsStandalone({ reader: cluster(), ec2 }))).toEqual({
      reason: 'CloudLookupFailed',
      message:
        'EC2 DescribeSecurityGroups in us-east-1 failed: RequestLimitExceeded: Request limit exceeded.',
    });
  });

  it('UserDataSecretNotFound when the Secret is absent', async () => {
    expect(
      failure(await discoverAwsStandalone({ reader: cluster(without('Secret')), ec2 })),
    ).toEqual({
      reason: 'UserDataSecretNotFound',
      // Every worker set shares it: the first one's reason, the others named after it.
      message: expect.stringMatching(
        new RegExp(
          `^${escapeRegExp('Secret openshift-machine-api/worker-user-data (userDataSecret of MachineSet prod-east-7xk2p-worker-us-east-1a) not found')}; no other worker MachineSet could be used: prod-east-7xk2p-worker-us-east-1b \\(`,
        ),
      ) as unknown,
    });
  });

  it('UserDataKeyMissing when the Secret has no userData', async () => {
    const reader = cluster((objects) => {
      const secret = objects.find((o) => o.kind === 'Secret')!;
      delete secret.stringData!.userData;
      return objects;
    });
    expect(failure(await discoverAwsStandalone({ reader, ec2 }))).toEqual({
      reason: 'UserDataKeyMissing',
      // Every worker set shares it: the first one's reason, the others named after it.
      message: expect.stringMatching(
        new RegExp(
          `^${escapeRegExp("Secret openshift-machine-api/worker-user-data (userDataSecret of MachineSet prod-east-7xk2p-worker-us-east-1a) has no 'userData' key")}; no other worker MachineSet could be used: prod-east-7xk2p-worker-us-east-1b \\(`,
        ),
      ) as unknown,
    });
  });

  it('NoTaggedSubnets when no subnet carries the internal-elb role', async () => {
    emulator.seed({
      ...world,
      subnets: world.subnets!.map((s) => {
        const tags = { ...s.Tags };
        delete tags['kubernetes.io/role/internal-elb'];
        return { ...s, Tags: tags };
      }),
    });
    expect(failure(await discoverAwsStandalone({ reader: cluster(), ec2 }))).toEqual({
      reason: 'NoTaggedSubnets',
      message:
        'no subnet in us-east-1 carries both the tag kubernetes.io/cluster/prod-east-7xk2p and kubernetes.io/role/internal-elb=1',
    });
  });

  it('accepts subnets whose cluster tag is shared rather than owned', async () => {
    emulator.seed({
      ...world,
      subnets: world.subnets!.map((s) => ({
        ...s,
        Tags: { ...s.Tags, 'kubernetes.io/cluster/prod-east-7xk2p': 'shared' },
      })),
    });
    const result = await discoverAwsStandalone({ reader: cluster(), ec2 });
    expect(result.ok && result.infrastructure.subnets.map((s) => s.id)).toEqual(
      EXPECTED.subnets.map((s) => s.id),
    );
  });

  it('SecurityGroupNotFound when a Name-tagged group is gone', async () => {
    emulator.removeSecurityGroup('sg-0lb00000000000002');
    expect(failure(await discoverAwsStandalone({ reader: cluster(), ec2 }))).toEqual({
      reason: 'SecurityGroupNotFound',
      // Every worker set shares it: the first one's reason, the others named after it.
      message: expect.stringMatching(
        new RegExp(
          `^${escapeRegExp('security group tag Name=prod-east-7xk2p-lb of MachineSet prod-east-7xk2p-worker-us-east-1a not found in EC2 (us-east-1)')}; no other worker MachineSet could be used: prod-east-7xk2p-worker-us-east-1b \\(`,
        ),
      ) as unknown,
    });
  });

  it('AMINotFound when the AMI is not in EC2', async () => {
    emulator.removeImage('ami-0c6f2a5e3d1b7a901');
    expect(failure(await discoverAwsStandalone({ reader: cluster(), ec2 }))).toEqual({
      reason: 'AMINotFound',
      // Every worker set shares it: the first one's reason, the others named after it.
      message: expect.stringMatching(
        new RegExp(
          `^${escapeRegExp('AMI ami-0c6f2a5e3d1b7a901 of MachineSet prod-east-7xk2p-worker-us-east-1a not found in EC2 (us-east-1)')}; no other worker MachineSet could be used: prod-east-7xk2p-worker-us-east-1b \\(`,
        ),
      ) as unknown,
    });
  });

  it('CloudLookupFailed when an EC2 call fails', async () => {
    emulator.injectError('DescribeSubnets', {
      code: 'UnauthorizedOperation',
      message: 'You are not authorized to perform this operation.',
    });
    expect(failure(await discoverAwsStandalone({ reader: cluster(), ec2 }))).toEqual({
      reason: 'CloudLookupFailed',
      message:
        'EC2 DescribeSubnets in us-east-1 failed: UnauthorizedOperation: You are not authorized to perform this operation.',
    });
  });

  it('CloudLookupFailed when the credentials are rejected', async () => {
    const badClient = new EC2Client({
      ...emulator.clientConfig(),
      credentials: { accessKeyId: emulator.credentials.accessKeyId, secretAccessKey: 'wrong' },
      maxAttempts: 1,
    });
    try {
      const result = failure(await discoverAwsStandalone({ reader: cluster(), ec2: badClient }));
      expect(result.reason).toBe('CloudLookupFailed');
      expect(result.message).toMatch(
        /^EC2 DescribeSubnets in us-east-1 failed: SignatureDoesNotMatch: /,
      );
    } finally {
      badClient.destroy();
    }
  });

  it('finds a Manual/STS cluster from its CloudCredential and Authentication', async () => {
    const sts = (objects: KubeObject[]) => [
      ...objects,
      {
        apiVersion: 'operator.openshift.io/v1',
        kind: 'CloudCredential',
        metadata: { name: 'cluster' },
        spec: { credentialsMode: 'Manual' },
      },
      {
        apiVersion: 'config.openshift.io/v1',
        kind: 'Authentication',
        metadata: { name: 'cluster' },
        spec: { serviceAccountIssuer: 'https://prod-east-oidc.s3.us-east-1.amazonaws.com' },
      },
    ];
    const result = await discoverAwsStandalone({ reader: cluster(sts), ec2 });
    expect(result.ok && result.infrastructure.cloudCredentials).toEqual({
      mode: 'ManualSTS',
      serviceAccountIssuer: 'https://prod-east-oidc.s3.us-east-1.amazonaws.com',
    });
  });

  it('KubernetesLookupFailed when reading the cluster fails', async () => {
    const reader: ClusterObjectReader = {
      getInfrastructure: () => cluster().getInfrastructure(),
      getProxy: () => Promise.resolve(undefined),
      getCloudCredential: () => Promise.resolve(undefined),
      getAuthentication: () => Promise.resolve(undefined),
      listMachineSets: () =>
        Promise.reject(
          Object.assign(new Error('HTTP-Code: 403'), {
            code: 403,
            body: JSON.stringify({
              kind: 'Status',
              message: 'machinesets.machine.openshift.io is forbidden',
            }),
          }),
        ),
      getSecret: () => Promise.resolve(undefined),
      getObject: () => Promise.resolve(undefined),
      listObjects: () => Promise.resolve([]),
    };
    expect(failure(await discoverAwsStandalone({ reader, ec2 }))).toEqual({
      reason: 'KubernetesLookupFailed',
      message:
        'reading MachineSets in openshift-machine-api failed: HTTP 403: machinesets.machine.openshift.io is forbidden',
    });
  });
});
