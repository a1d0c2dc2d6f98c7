import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ComputeManagementClient } from '@azure/arm-compute';
import { NetworkManagementClient } from '@azure/arm-network';
import { ArmResourceReader } from '@fleet/discovery';
import { ArmEmulator, azureFixtureArmWorld } from '@fleet/testing';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { armClientOptions, parseAzureEnv } from './credentials.js';

const world = azureFixtureArmWorld();
const RG = 'prod-west-q8m4d-rg';

/**
 * The audience the sidecar's ARM clients ask Entra ID for. Against any cloud but the public one
 * (and the emulator) a token for https://management.azure.com is refused by ARM with
 * InvalidAuthenticationTokenAudience.
 */
describe('armClientOptions', () => {
  const arm = new ArmEmulator(world);
  let dir: string;
  beforeAll(async () => {
    await arm.start();
    dir = mkdtempSync(join(tmpdir(), 'azure-credentials-'));
    writeFileSync(join(dir, 'ca.pem'), arm.caPem);
  });
  afterAll(async () => {
    await arm.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("makes every ARM client the sidecar uses ask for the configured ARM endpoint's audience", async () => {
    const options = armClientOptions(
      parseAzureEnv({ AZURE_ENDPOINT_URL_ARM: arm.url, AZURE_CA_BUNDLE: join(dir, 'ca.pem') }),
    );
    const scopes = new Set<string>();
    const inner = arm.credential();
    const credential = {
      getToken: (scope: string | string[]) => {
        for (const s of [scope].flat()) scopes.add(s);
        return inner.getToken();
      },
    };
    const reader = new ArmResourceReader(credential, world.subscriptionID, options);
    await reader.getSubnet(RG, 'prod-west-q8m4d-vnet', 'prod-west-q8m4d-worker-subnet');
    await reader.getUserAssignedIdentity(RG, 'prod-west-q8m4d-identity');
    await reader.getMarketplaceImage('eastus', {
      publisher: 'azureopenshift',
      offer: 'aro4',
      sku: 'aro_416',
      version: '416.94.20240701',
    });
    await reader.listVmSizes('eastus');
    const compute = new ComputeManagementClient(credential, world.subscriptionID, options);
    await compute.virtualMachineImages
      .list('eastus', 'azureopenshift', 'aro4', 'aro_416')
      .catch(() => undefined);
    const network = new NetworkManagementClient(credential, world.subscriptionID, options);
    await network.subnets.get(RG, 'prod-west-q8m4d-vnet', 'prod-west-q8m4d-worker-subnet');
    expect([...scopes]).toEqual([`${arm.url}/.default`]);
  });
});
