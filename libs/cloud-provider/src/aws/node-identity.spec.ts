import { describe, expect, it, jest } from '@jest/globals';
import {
  parseAwsProviderID,
  verifyAwsNodeIdentity,
  type DescribeInstancesLookup,
  type Ec2InstanceIdentity,
} from './node-identity.js';

describe('parseAwsProviderID', () => {
  it.each([
    ['aws:///us-east-1a/i-0abc', 'i-0abc'],
    ['aws:///us-east-1a/i-0a000000000000001', 'i-0a000000000000001'],
    ['aws://us-east-1a/i-0abc', 'i-0abc'],
    ['aws:///us-east-1a/', undefined],
    ['aws:///us-east-1a/vol-0abc', undefined],
    ['azure:///subscriptions/x/i-0abc', undefined],
    ['', undefined],
  ])('%s → %s', (providerID, expected) => {
    expect(parseAwsProviderID(providerID)).toBe(expected);
  });
});

describe('verifyAwsNodeIdentity', () => {
  const world: Ec2InstanceIdentity[] = [
    {
      instanceId: 'i-0c000000000000003',
      privateDnsName: 'ip-10-0-33-7.ec2.internal',
      privateDnsNames: ['ip-10-0-33-7.ec2.internal', 'ip-10-0-33-8.ec2.internal'],
      privateIpAddresses: ['10.0.33.7', '10.0.33.8'],
      state: 'running',
    },
    {
      instanceId: 'i-0d000000000000004',
      privateDnsName: 'ip-10-0-40-1.ec2.internal',
      state: 'terminated',
    },
  ];
  const lookup: DescribeInstancesLookup = (ids) =>
    Promise.resolve(world.filter((i) => ids.includes(i.instanceId)));

  it('returns a verdict per claim, in order', async () => {
    const verdicts = await verifyAwsNodeIdentity(
      [
        {
          nodeName: 'ip-10-0-33-7.ec2.internal',
          providerID: 'aws:///us-east-1c/i-0c000000000000003',
        },
        {
          nodeName: 'ip-10-0-99-9.ec2.internal',
          providerID: 'aws:///us-east-1c/i-0c000000000000003',
        },
        {
          nodeName: 'ip-10-0-40-1.ec2.internal',
          providerID: 'aws:///us-east-1a/i-0d000000000000004',
        },
        {
          nodeName: 'ip-10-0-1-1.ec2.internal',
          providerID: 'aws:///us-east-1a/i-0e000000000000005',
        },
        { nodeName: 'ip-10-0-1-1.ec2.internal', providerID: 'bogus' },
      ],
      lookup,
    );
    expect(verdicts.map((v) => (v.verified ? 'verified' : v.reason))).toEqual([
      'verified',
      'NodeNameMismatch',
      'InstanceNotRunning',
      'InstanceNotFound',
      'InvalidProviderID',
    ]);
    expect(verdicts[0]).toEqual({
      nodeName: 'ip-10-0-33-7.ec2.internal',
      providerID: 'aws:///us-east-1c/i-0c000000000000003',
      verified: true,
      instanceID: 'i-0c000000000000003',
      addresses: {
        dnsNames: ['ip-10-0-33-7.ec2.internal', 'ip-10-0-33-8.ec2.internal'],
        ipAddresses: ['10.0.33.7', '10.0.33.8'],
      },
    });
    expect(verdicts[1]).toMatchObject({
      message:
        'EC2 instance i-0c000000000000003 has PrivateDnsName "ip-10-0-33-7.ec2.internal", not node name "ip-10-0-99-9.ec2.internal"',
    });
  });

  it('looks up distinct ids in batches of at most 1000 and fails only the batch that failed', async () => {
    const ids = Array.from(
      { length: 2500 },
      (_, i) => `i-${(i + 1).toString(16).padStart(8, '0')}`,
    );
    const calls: number[] = [];
    const batched = jest.fn<DescribeInstancesLookup>((batch) => {
      calls.push(batch.length);
      if (batch.includes(ids[1500]!)) return Promise.reject(new Error('RequestLimitExceeded'));
      return Promise.resolve(
        batch.map((id) => ({ instanceId: id, privateDnsName: `node-${id}`, state: 'running' })),
      );
    });
    const claims = [...ids, ids[0]!].map((id) => ({
      nodeName: `node-${id}`,
      providerID: `aws:///z/${id}`,
    }));
    const verdicts = await verifyAwsNodeIdentity(claims, batched);
    expect(calls).toEqual([1000, 1000, 500]);
    expect(verdicts).toHaveLength(2501);
    // The second batch (ids 1001..2000, sorted) failed as a whole; the duplicate claim reuses its lookup.
    expect(verdicts.filter((v) => v.verified)).toHaveLength(1501);
    expect(verdicts[1500]).toMatchObject({
      verified: false,
      reason: 'CloudLookupFailed',
      message: `DescribeInstances for ${ids[1500]} failed: RequestLimitExceeded`,
    });
  });

  it('makes no cloud call when no claim names an instance', async () => {
    const none = jest.fn<DescribeInstancesLookup>(() => Promise.resolve([]));
    expect(await verifyAwsNodeIdentity([], none)).toEqual([]);
    await verifyAwsNodeIdentity([{ nodeName: 'n', providerID: 'gce://x/y' }], none);
    expect(none).not.toHaveBeenCalled();
  });
});
