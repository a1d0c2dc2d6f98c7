import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import {
  CreateFleetCommand,
  CreateTagsCommand,
  TerminateInstancesCommand,
  CreateLaunchTemplateCommand,
  DeleteLaunchTemplateCommand,
  DescribeImagesCommand,
  DescribeInstanceStatusCommand,
  DescribeInstanceTypeOfferingsCommand,
  DescribeLaunchTemplatesCommand,
  DescribeSpotPriceHistoryCommand,
  RunInstancesCommand,
  DescribeInstancesCommand,
  DescribeInstanceTypesCommand,
  DescribeSecurityGroupsCommand,
  DescribeSubnetsCommand,
  DescribeVpcsCommand,
  EC2Client,
  paginateDescribeInstances,
  paginateDescribeInstanceTypes,
  paginateDescribeSubnets,
  type EC2ClientConfig,
  type Instance,
  type _InstanceType,
} from '@aws-sdk/client-ec2';

import {
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  QueueDoesNotExist,
  SQSClient,
} from '@aws-sdk/client-sqs';
import {
  IAMClient,
  NoSuchEntityException,
  SimulatePrincipalPolicyCommand,
  paginateSimulatePrincipalPolicy,
} from '@aws-sdk/client-iam';
import { join } from 'node:path';

import { fixtureClusterDir } from '../fixtures.js';
import { Ec2Emulator, loadWorld, type Ec2World } from './index.js';

const WORLD_PATH = join(fixtureClusterDir('ocp-aws-standalone'), 'ec2-world.json');

interface SdkError {
  name: string;
  message: string;
  $metadata: { httpStatusCode?: number };
}

async function failure(promise: Promise<unknown>): Promise<SdkError> {
  try {
    await promise;
  } catch (err) {
    return err as SdkError;
  }
  throw new Error('expected the EC2 call to fail');
}

describe('Ec2Emulator', () => {
  const world: Ec2World = loadWorld(WORLD_PATH);
  const emulator = new Ec2Emulator(world);
  let ec2: EC2Client;

  function client(overrides: Partial<EC2ClientConfig> = {}): EC2Client {
    return new EC2Client({ ...emulator.clientConfig(), maxAttempts: 1, ...overrides });
  }

  beforeAll(async () => {
    await emulator.start();
    ec2 = client();
  });
  afterAll(async () => {
    ec2.destroy();
    await emulator.stop();
  });
  beforeEach(() => {
    emulator.seed(world);
    emulator.clearRequestLog();
  });

  describe('DescribeSubnets', () => {
    it('finds the cluster private subnets by tag-key and tag value, with zones and tags', async () => {
      const out = await ec2.send(
        new DescribeSubnetsCommand({
          Filters: [
            { Name: 'tag-key', Values: ['kubernetes.io/cluster/prod-east-7xk2p'] },
            { Name: 'tag:kubernetes.io/role/internal-elb', Values: ['1'] },
          ],
        }),
      );
      expect(out.Subnets?.map((s) => [s.SubnetId, s.AvailabilityZone])).toEqual([
        ['subnet-0aa11111111111111', 'us-east-1a'],
        ['subnet-0bb22222222222222', 'us-east-1b'],
        ['subnet-0cc33333333333333', 'us-east-1c'],
      ]);
      expect(out.Subnets?.[0]).toMatchObject({
        VpcId: 'vpc-0a1b2c3d4e5f60718',
        AvailabilityZoneId: 'use1-az1',
        CidrBlock: '10.0.16.0/20',
        AvailableIpAddressCount: 4000,
        State: 'available',
        OwnerId: '111122223333',
        SubnetArn: 'arn:aws:ec2:us-east-1:111122223333:subnet/subnet-0aa11111111111111',
        DefaultForAz: false,
        MapPublicIpOnLaunch: false,
      });
      expect(out.Subnets?.[0]?.Tags).toContainEqual({
        Key: 'kubernetes.io/role/internal-elb',
        Value: '1',
      });
      expect(out.$metadata.requestId).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('ORs the values of one filter, ANDs filters, and honours * and ? wildcards', async () => {
      const ids = async (filters: { Name: string; Values: string[] }[]) =>
        (await ec2.send(new DescribeSubnetsCommand({ Filters: filters }))).Subnets?.map(
          (s) => s.SubnetId,
        );
      expect(
        await ids([{ Name: 'availability-zone', Values: ['us-east-1a', 'us-east-1c'] }]),
      ).toEqual([
        'subnet-0aa11111111111111',
        'subnet-0cc33333333333333',
        'subnet-0dd44444444444444',
      ]);
      expect(
        await ids([
          { Name: 'availability-zone', Values: ['us-east-1a'] },
          { Name: 'tag:Name', Values: ['*-public-*'] },
        ]),
      ).toEqual(['subnet-0dd44444444444444']);
      expect(
        await ids([{ Name: 'tag:Name', Values: ['prod-east-7xk2p-subnet-private-us-east-1?'] }]),
      ).toHaveLength(3);
      expect(await ids([{ Name: 'vpc-id', Values: ['vpc-other'] }])).toEqual([]);
      expect(await ids([{ Name: 'subnet-id', Values: ['subnet-0bb22222222222222'] }])).toEqual([
        'subnet-0bb22222222222222',
      ]);
      // A tag filter on a key the resource lacks never matches, not even with '*'.
      expect(await ids([{ Name: 'tag:kubernetes.io/role/elb', Values: ['*'] }])).toEqual([
        'subnet-0dd44444444444444',
      ]);
    });

    it('resolves SubnetIds and reports unknown or malformed ones with the EC2 error codes', async () => {
      const out = await ec2.send(
        new DescribeSubnetsCommand({ SubnetIds: ['subnet-0cc33333333333333'] }),
      );
      expect(out.Subnets?.map((s) => s.SubnetId)).toEqual(['subnet-0cc33333333333333']);

      const missing = await failure(
        ec2.send(new DescribeSubnetsCommand({ SubnetIds: ['subnet-0ee55555555555555'] })),
      );
      expect(missing.name).toBe('InvalidSubnetID.NotFound');
      expect(missing.message).toBe("The subnet ID 'subnet-0ee55555555555555' does not exist");
      expect(missing.$metadata.httpStatusCode).toBe(400);

      const malformed = await failure(
        ec2.send(new DescribeSubnetsCommand({ SubnetIds: ['nope'] })),
      );
      expect(malformed.name).toBe('InvalidSubnetID.Malformed');
    });

    it('rejects unknown filter names and out-of-range MaxResults', async () => {
      const badFilter = await failure(
        ec2.send(new DescribeSubnetsCommand({ Filters: [{ Name: 'colour', Values: ['red'] }] })),
      );
      expect(badFilter.name).toBe('InvalidParameterValue');
      expect(badFilter.message).toBe("The filter 'colour' is invalid");

      for (const MaxResults of [4, 1001]) {
        const err = await failure(ec2.send(new DescribeSubnetsCommand({ MaxResults })));
        expect(err.name).toBe('InvalidParameterValue');
      }
    });

    it('pages with MaxResults and NextToken through the SDK paginator', async () => {
      const pages: string[][] = [];
      for await (const page of paginateDescribeSubnets({ client: ec2, pageSize: 5 }, {})) {
        pages.push((page.Subnets ?? []).map((s) => s.SubnetId ?? ''));
      }
      expect(pages).toHaveLength(1);
      expect(pages[0]).toHaveLength(4);
    });
  });

  describe('DescribeSecurityGroups', () => {
    it('finds groups by tag:Name and by group-name', async () => {
      const byTag = await ec2.send(
        new DescribeSecurityGroupsCommand({
          Filters: [{ Name: 'tag:Name', Values: ['prod-east-7xk2p-node', 'prod-east-7xk2p-lb'] }],
        }),
      );
      expect(byTag.SecurityGroups?.map((g) => g.GroupId)).toEqual([
        'sg-0n0de000000000001',
        'sg-0lb00000000000002',
      ]);
      expect(byTag.SecurityGroups?.[0]).toMatchObject({
        GroupName: 'terraform-20261101-node',
        VpcId: 'vpc-0a1b2c3d4e5f60718',
        OwnerId: '111122223333',
        Description: 'terraform-20261101-node',
      });

      const byName = await ec2.send(
        new DescribeSecurityGroupsCommand({
          Filters: [{ Name: 'group-name', Values: ['terraform-20261101-controlplane'] }],
        }),
      );
      expect(byName.SecurityGroups?.map((g) => g.GroupId)).toEqual(['sg-0cp00000000000003']);
    });

    it('reports unknown GroupIds and forbids MaxResults with GroupIds', async () => {
      const ok = await ec2.send(
        new DescribeSecurityGroupsCommand({ GroupIds: ['sg-0lb00000000000002'] }),
      );
      expect(ok.SecurityGroups?.map((g) => g.GroupName)).toEqual(['terraform-20261101-lb']);

      const missing = await failure(
        ec2.send(new DescribeSecurityGroupsCommand({ GroupIds: ['sg-0ffffffffffffffff'] })),
      );
      expect(missing.name).toBe('InvalidGroup.NotFound');

      const unknownName = await failure(
        ec2.send(new DescribeSecurityGroupsCommand({ GroupNames: ['nope'] })),
      );
      expect(unknownName.name).toBe('InvalidGroup.NotFound');

      const combined = await failure(
        ec2.send(
          new DescribeSecurityGroupsCommand({ GroupIds: ['sg-0lb00000000000002'], MaxResults: 5 }),
        ),
      );
      expect(combined.name).toBe('InvalidParameterCombination');
    });
  });

  describe('DescribeImages', () => {
    it('describes an AMI by id and by name pattern, and filters by owner', async () => {
      const byId = await ec2.send(
        new DescribeImagesCommand({ ImageIds: ['ami-0c6f2a5e3d1b7a901'] }),
      );
      expect(byId.Images).toHaveLength(1);
      expect(byId.Images?.[0]).toMatchObject({
        ImageId: 'ami-0c6f2a5e3d1b7a901',
        Name: 'rhcos-9.6.20261020-0-x86_64',
        Architecture: 'x86_64',
        State: 'available',
        OwnerId: '531415883065',
        CreationDate: '2026-10-20T08:00:00.000Z',
        RootDeviceType: 'ebs',
      });

      const byName = await ec2.send(
        new DescribeImagesCommand({ Filters: [{ Name: 'name', Values: ['rhcos-9.6.*'] }] }),
      );
      expect(byName.Images?.map((i) => i.ImageId)).toEqual(['ami-0c6f2a5e3d1b7a901']);

      const self = await ec2.send(new DescribeImagesCommand({ Owners: ['self'] }));
      expect(self.Images).toEqual([]);
      const rhcosOwner = await ec2.send(new DescribeImagesCommand({ Owners: ['531415883065'] }));
      expect(rhcosOwner.Images).toHaveLength(1);
    });

    it('reports unknown and malformed AMI ids', async () => {
      const missing = await failure(
        ec2.send(new DescribeImagesCommand({ ImageIds: ['ami-0000000000000dead'] })),
      );
      expect(missing.name).toBe('InvalidAMIID.NotFound');
      expect(missing.message).toBe("The image id '[ami-0000000000000dead]' does not exist");

      const malformed = await failure(ec2.send(new DescribeImagesCommand({ ImageIds: ['rhcos'] })));
      expect(malformed.name).toBe('InvalidAMIID.Malformed');

      emulator.removeImage('ami-0c6f2a5e3d1b7a901');
      const removed = await failure(
        ec2.send(new DescribeImagesCommand({ ImageIds: ['ami-0c6f2a5e3d1b7a901'] })),
      );
      expect(removed.name).toBe('InvalidAMIID.NotFound');
    });
  });

  describe('DescribeInstances', () => {
    it('returns reservations with instances in the EC2 shape', async () => {
      const out = await ec2.send(new DescribeInstancesCommand({}));
      const instances = out.Reservations?.flatMap((r) => r.Instances ?? []) ?? [];
      expect(out.Reservations?.every((r) => r.ReservationId?.startsWith('r-'))).toBe(true);
      expect(instances.map((i) => i.InstanceId)).toEqual([
        'i-0a000000000000001',
        'i-0b000000000000002',
        'i-0c0ffee0000000003',
      ]);
      expect(instances[2]).toMatchObject({
        InstanceType: 'c6i.2xlarge',
        PrivateDnsName: 'ip-10-0-50-7.ec2.internal',
        PrivateIpAddress: '10.0.50.7',
        SubnetId: 'subnet-0cc33333333333333',
        VpcId: 'vpc-0a1b2c3d4e5f60718',
        Placement: { AvailabilityZone: 'us-east-1c' },
        State: { Code: 16, Name: 'running' },
      });
      expect(instances[2]?.LaunchTime).toBeInstanceOf(Date);
      expect(instances[2]?.Tags).toContainEqual({ Key: 'karpenter.sh/nodepool', Value: 'default' });
    });

    it('filters by instance id, state, private DNS name and tags', async () => {
      const ids = async (filters: { Name: string; Values: string[] }[]) =>
        (await ec2.send(new DescribeInstancesCommand({ Filters: filters }))).Reservations?.flatMap(
          (r) => r.Instances?.map((i) => i.InstanceId) ?? [],
        );
      expect(await ids([{ Name: 'tag-key', Values: ['karpenter.sh/nodeclaim'] }])).toEqual([
        'i-0c0ffee0000000003',
      ]);
      expect(
        await ids([{ Name: 'private-dns-name', Values: ['ip-10-0-33-140.ec2.internal'] }]),
      ).toEqual(['i-0b000000000000002']);
      expect(
        await ids([
          { Name: 'instance-id', Values: ['i-0a000000000000001', 'i-0b000000000000002'] },
          { Name: 'instance-type', Values: ['m6i.*'] },
        ]),
      ).toEqual(['i-0a000000000000001', 'i-0b000000000000002']);

      emulator.setInstanceState('i-0a000000000000001', 'stopped');
      expect(await ids([{ Name: 'instance-state-name', Values: ['running'] }])).toEqual([
        'i-0b000000000000002',
        'i-0c0ffee0000000003',
      ]);
      expect(await ids([{ Name: 'instance-state-code', Values: ['80'] }])).toEqual([
        'i-0a000000000000001',
      ]);
    });

    it('resolves InstanceIds and rejects unknown, malformed and MaxResults-combined requests', async () => {
      const out = await ec2.send(
        new DescribeInstancesCommand({ InstanceIds: ['i-0b000000000000002'] }),
      );
      expect(out.Reservations?.[0]?.Instances?.[0]?.PrivateDnsName).toBe(
        'ip-10-0-33-140.ec2.internal',
      );

      const missing = await failure(
        ec2.send(
          new DescribeInstancesCommand({
            InstanceIds: ['i-0b000000000000002', 'i-0d000000000000004', 'i-0e000000000000005'],
          }),
        ),
      );
      expect(missing.name).toBe('InvalidInstanceID.NotFound');
      expect(missing.message).toBe(
        "The instance IDs 'i-0d000000000000004, i-0e000000000000005' do not exist",
      );

      const malformed = await failure(
        ec2.send(new DescribeInstancesCommand({ InstanceIds: ['ip-10-0-17-21'] })),
      );
      expect(malformed.name).toBe('InvalidInstanceID.Malformed');

      const combined = await failure(
        ec2.send(
          new DescribeInstancesCommand({ InstanceIds: ['i-0b000000000000002'], MaxResults: 5 }),
        ),
      );
      expect(combined.name).toBe('InvalidParameterCombination');

      for (const MaxResults of [4, 1001]) {
        const err = await failure(ec2.send(new DescribeInstancesCommand({ MaxResults })));
        expect(err.name).toBe('InvalidParameterValue');
      }
    });

    it('pages instances through paginateDescribeInstances, one request per page', async () => {
      for (let n = 0; n < 9; n++) {
        emulator.addInstance({ SubnetId: 'subnet-0aa11111111111111', Tags: { batch: 'yes' } });
      }
      emulator.clearRequestLog();
      const seen: string[] = [];
      let pages = 0;
      for await (const page of paginateDescribeInstances({ client: ec2, pageSize: 5 }, {})) {
        pages += 1;
        for (const r of page.Reservations ?? []) {
          for (const i of r.Instances ?? []) seen.push(i.InstanceId ?? '');
        }
      }
      expect(pages).toBe(3);
      expect(seen).toHaveLength(12);
      expect(new Set(seen).size).toBe(12);
      expect(emulator.actions).toEqual([
        'DescribeInstances',
        'DescribeInstances',
        'DescribeInstances',
      ]);
      expect(emulator.requestLog[0]?.params.MaxResults).toBe('5');
      expect(emulator.requestLog[1]?.params.NextToken).toBeDefined();
    });

    it('rejects a NextToken that belongs to another query', async () => {
      const first = await ec2.send(new DescribeInstancesCommand({ MaxResults: 5 }));
      expect(first.NextToken).toBeUndefined();
      for (let n = 0; n < 5; n++) emulator.addInstance({});
      const paged = await ec2.send(new DescribeInstancesCommand({ MaxResults: 5 }));
      expect(paged.NextToken).toBeDefined();
      const err = await failure(
        ec2.send(
          new DescribeInstancesCommand({
            MaxResults: 5,
            NextToken: paged.NextToken,
            Filters: [{ Name: 'instance-state-name', Values: ['running'] }],
          }),
        ),
      );
      expect(err.name).toBe('InvalidPaginationToken');
    });

    it('reflects in-process mutations: add, state changes, removal', async () => {
      const added = emulator.addInstance({
        InstanceType: 'm6i.large',
        SubnetId: 'subnet-0bb22222222222222',
        IamInstanceProfile: 'prod-east-7xk2p-worker-profile',
        Tags: { 'karpenter.sh/nodeclaim': 'default-abcde' },
      });
      expect(added.InstanceId).toMatch(/^i-[0-9a-f]{17}$/);
      expect(added.PrivateDnsName).toMatch(/^ip-10-0-32-\d+\.ec2\.internal$/);

      const describeOne = async (): Promise<Instance | undefined> =>
        (await ec2.send(new DescribeInstancesCommand({ InstanceIds: [added.InstanceId] })))
          .Reservations?.[0]?.Instances?.[0];
      expect(await describeOne()).toMatchObject({
        PrivateDnsName: added.PrivateDnsName,
        Placement: { AvailabilityZone: 'us-east-1b' },
        IamInstanceProfile: {
          Arn: 'arn:aws:iam::111122223333:instance-profile/prod-east-7xk2p-worker-profile',
        },
        State: { Code: 16, Name: 'running' },
      });

      emulator.setInstanceState(added.InstanceId, 'terminated');
      const terminated = await describeOne();
      expect(terminated?.State).toEqual({ Code: 48, Name: 'terminated' });
      expect(terminated?.PrivateDnsName).toBe('');

      emulator.removeInstance(added.InstanceId);
      expect((await failure(describeOne())).name).toBe('InvalidInstanceID.NotFound');
    });
  });

  describe('DescribeInstanceTypes', () => {
    it('describes the named types with the figures capacity is derived from', async () => {
      const out = await ec2.send(
        new DescribeInstanceTypesCommand({ InstanceTypes: ['m6i.xlarge', 'g5.xlarge'] }),
      );
      const byName = new Map((out.InstanceTypes ?? []).map((t) => [t.InstanceType ?? '', t]));
      expect(byName.get('m6i.xlarge')).toMatchObject({
        VCpuInfo: { DefaultVCpus: 4 },
        MemoryInfo: { SizeInMiB: 16384 },
        ProcessorInfo: { SupportedArchitectures: ['x86_64'] },
        InstanceStorageSupported: false,
      });
      expect(byName.get('m6i.xlarge')?.GpuInfo).toBeUndefined();
      expect(byName.get('g5.xlarge')).toMatchObject({
        GpuInfo: {
          Gpus: [
            { Name: 'A10G', Manufacturer: 'NVIDIA', Count: 1, MemoryInfo: { SizeInMiB: 24576 } },
          ],
          TotalGpuMemoryInMiB: 24576,
        },
        InstanceStorageInfo: { TotalSizeInGB: 250 },
      });
    });

    it('an unknown type is InvalidInstanceType naming every unknown one', async () => {
      const err = await failure(
        ec2.send(
          new DescribeInstanceTypesCommand({
            // The SDK types the known names; EC2 is what judges them.
            InstanceTypes: ['m6i.xlarge', 'm9z.huge', 'x0.tiny'] as _InstanceType[],
          }),
        ),
      );
      expect(err.name).toBe('InvalidInstanceType');
      expect(err.message).toBe(
        'The following supplied instance types do not exist: [m9z.huge, x0.tiny]',
      );
    });

    it('filters by architecture and pages with MaxResults 5..100', async () => {
      const arm = await ec2.send(
        new DescribeInstanceTypesCommand({
          Filters: [{ Name: 'processor-info.supported-architecture', Values: ['arm64'] }],
        }),
      );
      expect(arm.InstanceTypes?.map((t) => t.InstanceType)).toEqual(['m6g.xlarge']);
      const names: string[] = [];
      for await (const page of paginateDescribeInstanceTypes({ client: ec2, pageSize: 5 }, {})) {
        names.push(...(page.InstanceTypes ?? []).map((t) => t.InstanceType ?? ''));
      }
      expect(names).toHaveLength(8);
      const tooBig = await failure(ec2.send(new DescribeInstanceTypesCommand({ MaxResults: 101 })));
      expect(tooBig.name).toBe('InvalidParameterValue');
    });

    it('a world can declare its own catalogue', async () => {
      const own = new Ec2Emulator({
        instanceTypes: [{ InstanceType: 'm7i.large', VCpus: 2, MemoryMiB: 8192 }],
      });
      await own.start();
      const client2 = new EC2Client({ ...own.clientConfig(), maxAttempts: 1 });
      const out = await client2.send(new DescribeInstanceTypesCommand({}));
      client2.destroy();
      await own.stop();
      expect(out.InstanceTypes?.map((t) => t.InstanceType)).toEqual(['m7i.large']);
    });
  });

  describe('protocol', () => {
    it('answers actions it does not implement with InvalidAction', async () => {
      const err = await failure(ec2.send(new DescribeVpcsCommand({})));
      expect(err.name).toBe('InvalidAction');
      expect(err.message).toBe('The action DescribeVpcs is not valid for this web service.');
    });

    it('fails the next calls with an injected error, then recovers', async () => {
      emulator.injectError('DescribeSubnets', { code: 'UnauthorizedOperation', times: 1 });
      expect((await failure(ec2.send(new DescribeSubnetsCommand({})))).name).toBe(
        'UnauthorizedOperation',
      );
      await expect(ec2.send(new DescribeSubnetsCommand({}))).resolves.toBeDefined();
      expect(emulator.requestLog.map((r) => r.errorCode)).toEqual([
        'UnauthorizedOperation',
        undefined,
      ]);
    });

    it('answers DryRun with DryRunOperation', async () => {
      const err = await failure(ec2.send(new DescribeInstancesCommand({ DryRun: true })));
      expect(err.name).toBe('DryRunOperation');
    });
  });

  describe('SigV4 authentication', () => {
    let other: EC2Client | undefined;
    afterEach(() => {
      other?.destroy();
      other = undefined;
    });

    /** Runs after the SDK signed the request, so it can damage what was signed. */
    function tamper(
      mutate: (request: { headers: Record<string, string>; body?: unknown }) => void,
    ): EC2Client {
      const c = client();
      type Middleware = Parameters<typeof c.middlewareStack.addRelativeTo>[0];
      type Args = { request: { headers: Record<string, string>; body?: unknown } };
      const middleware = (next: (args: Args) => Promise<unknown>) => (args: Args) => {
        mutate(args.request);
        return next(args);
      };
      c.middlewareStack.addRelativeTo(middleware as unknown as Middleware, {
        relation: 'after',
        toMiddleware: 'httpSigningMiddleware',
        name: 'tamper',
      });
      return c;
    }

    it('rejects a wrong secret key with SignatureDoesNotMatch', async () => {
      other = client({
        credentials: { accessKeyId: emulator.credentials.accessKeyId, secretAccessKey: 'wrong' },
      });
      const err = await failure(other.send(new DescribeSubnetsCommand({})));
      expect(err.name).toBe('SignatureDoesNotMatch');
      expect(err.$metadata.httpStatusCode).toBe(403);
    });

    it('rejects an unknown access key with AuthFailure', async () => {
      other = client({ credentials: { accessKeyId: 'AKIDUNKNOWN', secretAccessKey: 'x' } });
      const err = await failure(other.send(new DescribeSubnetsCommand({})));
      expect(err.name).toBe('AuthFailure');
      expect(err.$metadata.httpStatusCode).toBe(401);
    });

    it('rejects a signature scoped to another region', async () => {
      other = client({ region: 'eu-west-1' });
      const err = await failure(other.send(new DescribeSubnetsCommand({})));
      expect(err.name).toBe('AuthFailure');
      expect(err.message).toContain("not 'eu-west-1'");
    });

    it('rejects a request whose body changed after signing', async () => {
      other = tamper((request) => {
        request.body = String(request.body).replace('DescribeSubnets', 'DescribeImages');
        request.headers['content-length'] = String(String(request.body).length);
      });
      const err = await failure(other.send(new DescribeSubnetsCommand({})));
      expect(err.name).toBe('SignatureDoesNotMatch');
    });

    it('rejects an unsigned request with MissingAuthenticationToken', async () => {
      other = tamper((request) => {
        delete request.headers.authorization;
      });
      const err = await failure(other.send(new DescribeSubnetsCommand({})));
      expect(err.name).toBe('MissingAuthenticationToken');
    });

    it('rejects an Authorization header without a Signature with IncompleteSignature', async () => {
      other = tamper((request) => {
        request.headers.authorization = request.headers.authorization!.replace(
          /, Signature=[0-9a-f]+/,
          '',
        );
      });
      const err = await failure(other.send(new DescribeSubnetsCommand({})));
      expect(err.name).toBe('IncompleteSignature');
    });

    it('rejects a request signed more than 15 minutes off with RequestExpired', async () => {
      other = client({ systemClockOffset: -20 * 60 * 1000 });
      const err = await failure(other.send(new DescribeSubnetsCommand({})));
      expect(err.name).toBe('RequestExpired');
    });
  });

  // What karpenter-provider-aws v1.14.1 calls before it launches anything
  // (test/real-karpenter/standalone-aws.real-spec.ts runs the real provider against these).
  describe('what Karpenter asks of EC2 at start and to validate an EC2NodeClass', () => {
    it('DescribeInstanceTypeOfferings: every catalogue type in each zone of the subnets', async () => {
      const out = await ec2.send(
        new DescribeInstanceTypeOfferingsCommand({
          LocationType: 'availability-zone',
          Filters: [{ Name: 'instance-type', Values: ['m6i.xlarge'] }],
        }),
      );
      expect(out.InstanceTypeOfferings).toEqual(
        ['us-east-1a', 'us-east-1b', 'us-east-1c'].map((Location) => ({
          InstanceType: 'm6i.xlarge',
          LocationType: 'availability-zone',
          Location,
        })),
      );
      const wrong = await failure(
        ec2.send(new DescribeInstanceTypeOfferingsCommand({ LocationType: 'planet' as never })),
      );
      expect(wrong.name).toBe('InvalidParameterValue');
    });

    it('launch templates: a missing name is NotFoundException, then created, found by tag, deleted', async () => {
      const missing = await failure(
        ec2.send(
          new DescribeLaunchTemplatesCommand({ LaunchTemplateNames: ['karpenter.k8s.aws/1'] }),
        ),
      );
      expect(missing.name).toBe('InvalidLaunchTemplateName.NotFoundException');
      const created = await ec2.send(
        new CreateLaunchTemplateCommand({
          LaunchTemplateName: 'karpenter.k8s.aws/1',
          LaunchTemplateData: { ImageId: 'ami-0c6f2a5e3d1b7a901', UserData: 'e30=' },
          TagSpecifications: [
            {
              ResourceType: 'launch-template',
              Tags: [{ Key: 'karpenter.sh/cluster', Value: 'c' }],
            },
          ],
        }),
      );
      expect(created.LaunchTemplate).toMatchObject({
        LaunchTemplateName: 'karpenter.k8s.aws/1',
        LaunchTemplateId: expect.stringMatching(/^lt-[0-9a-f]{17}$/),
        DefaultVersionNumber: 1,
        Tags: [{ Key: 'karpenter.sh/cluster', Value: 'c' }],
      });
      const again = await failure(
        ec2.send(
          new CreateLaunchTemplateCommand({
            LaunchTemplateName: 'karpenter.k8s.aws/1',
            LaunchTemplateData: {},
          }),
        ),
      );
      expect(again.name).toBe('InvalidLaunchTemplateName.AlreadyExistsException');
      const byTag = await ec2.send(
        new DescribeLaunchTemplatesCommand({
          Filters: [{ Name: 'tag:karpenter.sh/cluster', Values: ['c'] }],
        }),
      );
      expect(byTag.LaunchTemplates?.map((t) => t.LaunchTemplateId)).toEqual([
        created.LaunchTemplate?.LaunchTemplateId,
      ]);
      expect(emulator.listLaunchTemplates()[0]?.Data).toMatchObject({
        ImageId: 'ami-0c6f2a5e3d1b7a901',
        UserData: 'e30=',
      });
      await ec2.send(
        new DeleteLaunchTemplateCommand({
          LaunchTemplateId: created.LaunchTemplate?.LaunchTemplateId,
        }),
      );
      expect(emulator.listLaunchTemplates()).toEqual([]);
    });

    it('CreateFleet and RunInstances as dry runs answer DryRunOperation and launch nothing', async () => {
      const before = emulator.listInstances().length;
      const fleet = await failure(
        ec2.send(
          new CreateFleetCommand({
            DryRun: true,
            Type: 'instant',
            LaunchTemplateConfigs: [],
            TargetCapacitySpecification: {
              TotalTargetCapacity: 1,
              DefaultTargetCapacityType: 'on-demand',
            },
          }),
        ),
      );
      expect(fleet.name).toBe('DryRunOperation');
      const run = await failure(
        ec2.send(new RunInstancesCommand({ DryRun: true, MinCount: 1, MaxCount: 1 })),
      );
      expect(run.name).toBe('DryRunOperation');
      expect(emulator.listInstances()).toHaveLength(before);
    });

    it('CreateFleet (instant) launches one instance from the template and the cheapest override', async () => {
      const subnet = (await ec2.send(new DescribeSubnetsCommand({}))).Subnets![0]!;
      const template = await ec2.send(
        new CreateLaunchTemplateCommand({
          LaunchTemplateName: 'karpenter.k8s.aws/fleet-test',
          LaunchTemplateData: {
            ImageId: 'ami-0c6f2a5e3d1b7a901',
            UserData: 'e30=',
            IamInstanceProfile: { Name: 'worker-profile' },
            SecurityGroupIds: ['sg-0a1b2c3d4e5f60001'],
            TagSpecifications: [
              { ResourceType: 'instance', Tags: [{ Key: 'from-template', Value: 'yes' }] },
            ],
          },
        }),
      );
      const override = (instanceType: _InstanceType, priority: number) => ({
        InstanceType: instanceType,
        SubnetId: subnet.SubnetId,
        AvailabilityZone: subnet.AvailabilityZone,
        ImageId: 'ami-0c6f2a5e3d1b7a901',
        Priority: priority,
      });
      const out = await ec2.send(
        new CreateFleetCommand({
          Type: 'instant',
          LaunchTemplateConfigs: [
            {
              LaunchTemplateSpecification: {
                LaunchTemplateName: 'karpenter.k8s.aws/fleet-test',
                Version: '$Latest',
              },
              Overrides: [
                override('m6i.xlarge', 0.192),
                override('m6i.large', 0.096),
                override('no.such-type' as _InstanceType, 0.001),
              ],
            },
          ],
          TargetCapacitySpecification: {
            TotalTargetCapacity: 1,
            DefaultTargetCapacityType: 'on-demand',
          },
          OnDemandOptions: { AllocationStrategy: 'lowest-price' },
          TagSpecifications: [
            {
              ResourceType: 'instance',
              Tags: [{ Key: 'karpenter.sh/nodepool', Value: 'general' }],
            },
            { ResourceType: 'fleet', Tags: [{ Key: 'karpenter.sh/nodepool', Value: 'general' }] },
          ],
        }),
      );
      expect(out.FleetId).toMatch(/^fleet-/);
      expect(out.Errors?.map((e) => e.ErrorCode)).toEqual(['InvalidParameterValue']);
      expect(out.Instances).toHaveLength(1);
      const fleetInstance = out.Instances![0]!;
      expect(fleetInstance).toMatchObject({
        InstanceType: 'm6i.large',
        Lifecycle: 'on-demand',
        LaunchTemplateAndOverrides: {
          LaunchTemplateSpecification: {
            LaunchTemplateId: template.LaunchTemplate?.LaunchTemplateId,
          },
          Overrides: { SubnetId: subnet.SubnetId, AvailabilityZone: subnet.AvailabilityZone },
        },
      });
      const id = fleetInstance.InstanceIds![0]!;
      const described = await ec2.send(new DescribeInstancesCommand({ InstanceIds: [id] }));
      const instance = described.Reservations![0]!.Instances![0]!;
      expect(instance).toMatchObject({
        InstanceType: 'm6i.large',
        ImageId: 'ami-0c6f2a5e3d1b7a901',
        SubnetId: subnet.SubnetId,
        Placement: { AvailabilityZone: subnet.AvailabilityZone },
        IamInstanceProfile: { Arn: expect.stringMatching(/instance-profile\/worker-profile$/) },
      });
      expect(instance.SecurityGroups?.map((g) => g.GroupId)).toEqual(['sg-0a1b2c3d4e5f60001']);
      expect(instance.InstanceLifecycle).toBeUndefined();
      const tags = Object.fromEntries(instance.Tags!.map((t) => [t.Key ?? '', t.Value ?? '']));
      expect(tags).toMatchObject({
        'from-template': 'yes',
        'karpenter.sh/nodepool': 'general',
        'aws:ec2:fleet-id': out.FleetId,
        'aws:ec2launchtemplate:id': template.LaunchTemplate?.LaunchTemplateId,
      });
      expect(emulator.getInstance(id)?.UserData).toBe('e30=');

      const spot = await ec2.send(
        new CreateFleetCommand({
          Type: 'instant',
          LaunchTemplateConfigs: [
            {
              LaunchTemplateSpecification: { LaunchTemplateName: 'karpenter.k8s.aws/fleet-test' },
              Overrides: [override('m6i.large', 0.04)],
            },
          ],
          TargetCapacitySpecification: {
            TotalTargetCapacity: 1,
            DefaultTargetCapacityType: 'spot',
          },
        }),
      );
      const spotId = spot.Instances![0]!.InstanceIds![0]!;
      const spotInstance = (await ec2.send(new DescribeInstancesCommand({ InstanceIds: [spotId] })))
        .Reservations![0]!.Instances![0]!;
      expect(spotInstance.InstanceLifecycle).toBe('spot');
    });

    it('CreateFleet refuses a missing launch template, and other fleet types, as a whole', async () => {
      const request = (name: string, type: 'instant' | 'maintain') =>
        failure(
          ec2.send(
            new CreateFleetCommand({
              Type: type,
              LaunchTemplateConfigs: [
                { LaunchTemplateSpecification: { LaunchTemplateName: name, Version: '$Latest' } },
              ],
              TargetCapacitySpecification: {
                TotalTargetCapacity: 1,
                DefaultTargetCapacityType: 'on-demand',
              },
            }),
          ),
        );
      expect((await request('karpenter.k8s.aws/none', 'instant')).name).toBe(
        'InvalidLaunchTemplateName.NotFoundException',
      );
      expect((await request('karpenter.k8s.aws/none', 'maintain')).name).toBe(
        'InvalidParameterValue',
      );
    });

    it('CreateTags and TerminateInstances: by id, refusing unknown and malformed ids', async () => {
      const { InstanceId: id } = emulator.addInstance({});
      await ec2.send(
        new CreateTagsCommand({
          Resources: [id],
          Tags: [{ Key: 'karpenter.sh/nodeclaim', Value: 'general-abcde' }],
        }),
      );
      expect(emulator.getInstance(id)?.Tags['karpenter.sh/nodeclaim']).toBe('general-abcde');
      const reserved = await failure(
        ec2.send(new CreateTagsCommand({ Resources: [id], Tags: [{ Key: 'aws:x', Value: '' }] })),
      );
      expect(reserved.name).toBe('InvalidParameterValue');
      const unknown = await failure(
        ec2.send(
          new CreateTagsCommand({
            Resources: ['i-0123456789abcdef0'],
            Tags: [{ Key: 'k', Value: '' }],
          }),
        ),
      );
      expect(unknown.name).toBe('InvalidInstanceID.NotFound');

      const terminated = await ec2.send(new TerminateInstancesCommand({ InstanceIds: [id] }));
      expect(terminated.TerminatingInstances).toEqual([
        {
          InstanceId: id,
          CurrentState: { Code: 32, Name: 'shutting-down' },
          PreviousState: { Code: 16, Name: 'running' },
        },
      ]);
      expect(emulator.getInstance(id)?.State).toBe('terminated');
      const again = await ec2.send(new TerminateInstancesCommand({ InstanceIds: [id] }));
      expect(again.TerminatingInstances?.[0]?.CurrentState?.Name).toBe('terminated');
      const malformed = await failure(
        ec2.send(new TerminateInstancesCommand({ InstanceIds: ['instance-1'] })),
      );
      expect(malformed.name).toBe('InvalidInstanceID.Malformed');
      const missing = await failure(
        ec2.send(new TerminateInstancesCommand({ InstanceIds: ['i-0123456789abcdef0'] })),
      );
      expect(missing.name).toBe('InvalidInstanceID.NotFound');
    });

    it('spot prices for each type in each zone; every running instance ok, none with an event', async () => {
      const prices = await ec2.send(
        new DescribeSpotPriceHistoryCommand({
          InstanceTypes: ['m6i.xlarge'],
          ProductDescriptions: ['Linux/UNIX'],
          StartTime: new Date(),
        }),
      );
      expect(prices.SpotPriceHistory?.map((p) => p.AvailabilityZone).sort()).toEqual([
        'us-east-1a',
        'us-east-1b',
        'us-east-1c',
      ]);
      expect(Number(prices.SpotPriceHistory?.[0]?.SpotPrice)).toBeGreaterThan(0);
      const impaired = await ec2.send(
        new DescribeInstanceStatusCommand({
          Filters: [{ Name: 'instance-status.status', Values: ['impaired'] }],
        }),
      );
      expect(impaired.InstanceStatuses).toEqual([]);
      const events = await ec2.send(
        new DescribeInstanceStatusCommand({
          Filters: [{ Name: 'event.code', Values: ['instance-stop'] }],
        }),
      );
      expect(events.InstanceStatuses).toEqual([]);
      const ok = await ec2.send(new DescribeInstanceStatusCommand({}));
      expect(ok.InstanceStatuses?.length).toBe(
        emulator.listInstances().filter((i) => i.State === 'running').length,
      );
      expect(ok.InstanceStatuses?.length).toBeGreaterThan(0);
      expect(ok.InstanceStatuses?.every((s) => s.InstanceStatus?.Status === 'ok')).toBe(true);
    });
  });
});

describe('Ec2Emulator: SQS on the wire protocol of @aws-sdk/client-sqs (AWS JSON 1.0)', () => {
  const emulator = new Ec2Emulator({
    region: 'us-east-1',
    accountId: '123456789012',
    queues: [{ QueueName: 'ocp-east-spot' }],
  });
  let sqs: SQSClient;

  beforeAll(async () => {
    await emulator.start();
    sqs = new SQSClient({ ...emulator.clientConfig(), maxAttempts: 1 });
  });
  afterAll(async () => {
    sqs.destroy();
    await emulator.stop();
  });

  it('GetQueueUrl, then GetQueueAttributes by that URL: the queue ARN', async () => {
    const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: 'ocp-east-spot' }));
    expect(QueueUrl).toBe(`${emulator.url}/123456789012/ocp-east-spot`);
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
    );
    expect(Attributes).toEqual({ QueueArn: 'arn:aws:sqs:us-east-1:123456789012:ocp-east-spot' });
    expect(emulator.actions.slice(-2)).toEqual(['sqs:GetQueueUrl', 'sqs:GetQueueAttributes']);
  });

  it('a missing queue is QueueDoesNotExist, as the SDK models it', async () => {
    const err = await sqs
      .send(new GetQueueUrlCommand({ QueueName: 'nowhere' }))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QueueDoesNotExist);
    expect(err).toMatchObject({
      name: 'QueueDoesNotExist',
      message: 'The specified queue does not exist.',
      $metadata: { httpStatusCode: 400 },
    });
  });

  it('refuses a request signed with other credentials', async () => {
    const other = new SQSClient({
      ...emulator.clientConfig(),
      credentials: { accessKeyId: 'AKIAOTHER', secretAccessKey: 'not-the-secret' },
      maxAttempts: 1,
    });
    const err = await other
      .send(new GetQueueUrlCommand({ QueueName: 'ocp-east-spot' }))
      .catch((e: unknown) => e);
    other.destroy();
    expect(
      (err as { $metadata: { httpStatusCode: number } }).$metadata.httpStatusCode,
    ).toBeGreaterThanOrEqual(400);
    expect(emulator.requestLog.at(-1)?.errorCode).toEqual(expect.any(String));
  });
});

describe('Ec2Emulator: IAM on the wire protocol of @aws-sdk/client-iam (query, member lists)', () => {
  const emulator = new Ec2Emulator({
    region: 'us-east-1',
    accountId: '123456789012',
    roles: [
      {
        RoleName: 'karpenter',
        Path: '/openshift/',
        Policies: [
          {
            PolicyName: 'describe',
            PolicyDocument: {
              Statement: [
                { Effect: 'Allow', Action: ['ec2:Describe*', 'iam:PassRole'], Resource: '*' },
                { Effect: 'Deny', Action: 'ec2:DescribeImages', Resource: '*' },
                {
                  Effect: 'Allow',
                  Action: 'sqs:ReceiveMessage',
                  Resource: 'arn:aws:sqs:us-east-1:123456789012:spot-*',
                },
              ],
            },
          },
        ],
      },
    ],
  });
  let iam: IAMClient;
  const ARN = 'arn:aws:iam::123456789012:role/openshift/karpenter';

  beforeAll(async () => {
    await emulator.start();
    iam = new IAMClient({ ...emulator.clientConfig(), maxAttempts: 1 });
  });
  afterAll(async () => {
    iam.destroy();
    await emulator.stop();
  });

  it('SimulatePrincipalPolicy: allowed, explicitDeny and implicitDeny, wildcards included', async () => {
    const { EvaluationResults, IsTruncated } = await iam.send(
      new SimulatePrincipalPolicyCommand({
        PolicySourceArn: ARN,
        ActionNames: ['EC2:DescribeSubnets', 'ec2:DescribeImages', 'ec2:RunInstances'],
      }),
    );
    expect(IsTruncated).toBe(false);
    expect(EvaluationResults?.map((r) => [r.EvalActionName, r.EvalDecision])).toEqual([
      ['EC2:DescribeSubnets', 'allowed'],
      ['ec2:DescribeImages', 'explicitDeny'],
      ['ec2:RunInstances', 'implicitDeny'],
    ]);
    expect(emulator.requestLog.at(-1)).toMatchObject({
      action: 'iam:SimulatePrincipalPolicy',
      params: { PolicySourceArn: ARN, 'ActionNames.member.1': 'EC2:DescribeSubnets' },
    });
  });

  it('evaluates against the resources asked about', async () => {
    const decide = async (resource: string) =>
      (
        await iam.send(
          new SimulatePrincipalPolicyCommand({
            PolicySourceArn: ARN,
            ActionNames: ['sqs:ReceiveMessage'],
            ResourceArns: [resource],
          }),
        )
      ).EvaluationResults?.[0]?.EvalDecision;
    expect(await decide('arn:aws:sqs:us-east-1:123456789012:spot-east')).toBe('allowed');
    expect(await decide('arn:aws:sqs:us-east-1:123456789012:other')).toBe('implicitDeny');
  });

  it('pages with MaxItems and Marker, as the SDK paginator follows them', async () => {
    const actions: string[] = [];
    for await (const page of paginateSimulatePrincipalPolicy(
      { client: iam, pageSize: 2 },
      { PolicySourceArn: ARN, ActionNames: ['ec2:A', 'ec2:B', 'ec2:C', 'ec2:D', 'ec2:E'] },
    ))
      actions.push(...(page.EvaluationResults ?? []).map((r) => r.EvalActionName!));
    expect(actions).toEqual(['ec2:A', 'ec2:B', 'ec2:C', 'ec2:D', 'ec2:E']);
  });

  it('an unknown role is NoSuchEntity (404), as the SDK models it', async () => {
    const err = await iam
      .send(
        new SimulatePrincipalPolicyCommand({
          PolicySourceArn: 'arn:aws:iam::123456789012:role/nobody',
          ActionNames: ['ec2:RunInstances'],
        }),
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NoSuchEntityException);
    expect(err).toMatchObject({
      message: 'The role with name nobody cannot be found.',
      $metadata: { httpStatusCode: 404 },
    });
  });
});
