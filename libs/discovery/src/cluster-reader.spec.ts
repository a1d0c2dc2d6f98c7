import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EC2Client } from '@aws-sdk/client-ec2';
import { KubeConfig } from '@kubernetes/client-node';

import {
  CRDS_DIR,
  Ec2Emulator,
  fixtureWorldPath,
  KubeApiServerEmulator,
  loadWorld,
  OCP_AWS_STANDALONE,
} from '@fleet/testing';
import { discoverAwsStandalone } from './aws/standalone.js';
import { KubeClusterObjectReader } from './cluster-reader.js';

describe('KubeClusterObjectReader against the Kubernetes API-server emulator', () => {
  const apiServer = new KubeApiServerEmulator();
  let reader: KubeClusterObjectReader;

  beforeAll(async () => {
    await apiServer.start();
    apiServer.loadCrdsFromDir(join(CRDS_DIR, 'openshift'));
    apiServer.seedFromDir(fileURLToPath(OCP_AWS_STANDALONE));
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(apiServer.kubeconfigYaml());
    reader = new KubeClusterObjectReader(kubeConfig);
  });
  afterAll(async () => {
    await apiServer.stop();
  });

  it('reads Infrastructure, MachineSets and the user-data Secret, and maps 404 to absent', async () => {
    const infrastructure = (await reader.getInfrastructure()) as { status?: unknown };
    expect(infrastructure.status).toMatchObject({ infrastructureName: 'prod-east-7xk2p' });
    const machineSets = (await reader.listMachineSets('openshift-machine-api')) as {
      metadata: { name: string };
    }[];
    expect(machineSets.map((m) => m.metadata.name).sort()).toEqual([
      'prod-east-7xk2p-infra-us-east-1a',
      'prod-east-7xk2p-worker-us-east-1a',
      'prod-east-7xk2p-worker-us-east-1b',
      'prod-east-7xk2p-worker-us-east-1c',
    ]);
    const secret = await reader.getSecret('openshift-machine-api', 'worker-user-data');
    expect(Buffer.from(secret?.data?.userData ?? '', 'base64').toString('utf8')).toMatch(
      /^\{"ignition"/,
    );

    await expect(
      reader.getSecret('openshift-machine-api', 'no-such-secret'),
    ).resolves.toBeUndefined();
    await expect(reader.listMachineSets('openshift-karpenter')).resolves.toEqual([]);

    // The same discovery the in-memory integration spec checks, now over real HTTP on both sides.
    const ec2Emulator = new Ec2Emulator(loadWorld(fixtureWorldPath()));
    await ec2Emulator.start();
    const ec2 = new EC2Client({ ...ec2Emulator.clientConfig(), maxAttempts: 1 });
    try {
      const result = await discoverAwsStandalone({ reader, ec2 });
      expect(result).toMatchObject({
        ok: true,
        infrastructure: {
          infraID: 'prod-east-7xk2p',
          worker: { name: 'prod-east-7xk2p-worker-us-east-1a' },
          securityGroupIDs: ['sg-0n0de000000000001', 'sg-0lb00000000000002'],
        },
      });
    } finally {
      ec2.destroy();
      await ec2Emulator.stop();
    }
  });
});
