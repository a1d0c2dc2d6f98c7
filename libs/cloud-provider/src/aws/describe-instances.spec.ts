import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EC2Client } from '@aws-sdk/client-ec2';
import { Ec2Emulator } from '@fleet/testing';
import { describeInstancesLookup } from './describe-instances.js';

describe('describeInstancesLookup against the EC2 emulator', () => {
  const ec2 = new Ec2Emulator({ region: 'us-east-1' });
  let client: EC2Client;

  beforeAll(async () => {
    await ec2.start();
    client = new EC2Client({
      ...ec2.clientConfig(),
      maxAttempts: 1,
      requestHandler: { requestTimeout: 3_000, throwOnRequestTimeout: true },
    });
  });
  afterAll(async () => {
    client.destroy();
    await ec2.stop();
  });

  it('returns every private name and address of the instance (what its SANs may name)', async () => {
    const instance = ec2.addInstance({
      PrivateIpAddress: '10.0.7.10',
      SecondaryPrivateIpAddresses: ['10.0.7.11'],
    });
    const [found] = await describeInstancesLookup(client, 5_000)([instance.InstanceId]);
    expect(found).toEqual({
      instanceId: instance.InstanceId,
      privateDnsName: 'ip-10-0-7-10.ec2.internal',
      state: 'running',
      privateDnsNames: ['ip-10-0-7-10.ec2.internal', 'ip-10-0-7-11.ec2.internal'],
      privateIpAddresses: ['10.0.7.10', '10.0.7.11'],
    });
  });

  it('gives up on a DescribeInstances that never answers, within its deadline', async () => {
    const instance = ec2.addInstance({});
    const held = ec2.stall('DescribeInstances', 1);
    const started = Date.now();
    await expect(describeInstancesLookup(client, 5_000)([instance.InstanceId])).rejects.toThrow();
    expect(held()).toBe(1);
    expect(Date.now() - started).toBeLessThan(5_000 + 2_000);
  });
});
