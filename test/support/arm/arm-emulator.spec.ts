import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { ComputeManagementClient } from '@azure/arm-compute';
import { NetworkManagementClient } from '@azure/arm-network';
import { request } from 'node:https';

import { azureFixtureArmWorld } from '../ocp-azure-standalone.js';
import { ArmEmulator, type ArmWorld } from './arm-emulator.js';

const world = azureFixtureArmWorld();
const SUB = world.subscriptionID;
const RG = 'prod-west-q8m4d-rg';
const SIDECAR = world.servicePrincipals![0]!;

/** A JWT with the given claims (unsigned: a federated assertion the emulator does not verify). */
function jwt(claims: Record<string, unknown>): string {
  const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'RS256', typ: 'JWT' })}.${part(claims)}.c2lnbmF0dXJl`;
}

/** One HTTPS request to the emulator, trusting its CA. */
function call(
  arm: ArmEmulator,
  method: 'GET' | 'POST',
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: Record<string, unknown>; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(`${arm.url}${path}`, { method, headers, ca: arm.caPem }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: JSON.parse(text || '{}') as Record<string, unknown>,
        }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The client credentials grant, as the sidecar and azidentity send it. */
function token(arm: ArmEmulator, form: Record<string, string>, tenant = world.tenantID) {
  return call(
    arm,
    'POST',
    `/${tenant}/oauth2/v2.0/token`,
    { 'content-type': 'application/x-www-form-urlencoded' },
    new URLSearchParams({ grant_type: 'client_credentials', ...form }).toString(),
  );
}

/** An ARM GET with a bearer token. */
async function armGet(arm: ArmEmulator, path: string, bearer: string, apiVersion: string) {
  const res = await call(arm, 'GET', `${path}?api-version=${apiVersion}`, {
    authorization: `Bearer ${bearer}`,
  });
  return {
    status: res.status,
    retryAfter: res.headers['retry-after'] ?? null,
    body: res.body as { error?: { code: string; message: string } },
  };
}

const VM_PATH = `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Compute/virtualMachines/aks-general-a`;

describe('ARM emulator: what ARM and Entra ID refuse', () => {
  const arm = new ArmEmulator(world);
  const seeded = (): ArmWorld => ({
    ...azureFixtureArmWorld(),
    servicePrincipals: [
      { ...SIDECAR, objectId: '11111111-0000-4000-8000-000000000001' },
      {
        clientId: 'operand-client',
        objectId: '11111111-0000-4000-8000-000000000002',
        federatedCredential: {
          issuer: 'https://oidc.prod-west.example.com',
          subject: 'system:serviceaccount:openshift-karpenter:karpenter',
          audiences: ['openshift'],
        },
      },
      { clientId: 'no-roles', clientSecret: 'no-roles-secret' },
    ],
    roleAssignments: [
      { clientId: SIDECAR.clientId, scope: `/subscriptions/${SUB}`, role: 'Reader' },
      {
        clientId: 'operand-client',
        scope: `/subscriptions/${SUB}/resourceGroups/${RG}`,
        role: 'Contributor',
      },
    ],
    virtualMachines: [
      {
        resourceGroup: RG,
        name: 'aks-general-a',
        location: 'eastus',
        computerName: 'aks-general-a',
        powerState: 'running',
        networkInterfaces: [],
        provisioningState: 'Creating',
      },
    ],
  });
  beforeAll(() => arm.start());
  afterAll(() => arm.stop());
  beforeEach(() => arm.seed(seeded()));

  const sidecarToken = async (scope = `${arm.url}/.default`) => {
    const answer = await token(arm, {
      client_id: SIDECAR.clientId,
      client_secret: SIDECAR.clientSecret!,
      scope,
    });
    expect(answer.status).toBe(200);
    return answer.body.access_token as string;
  };

  it('refuses a token for another audience (401 InvalidAuthenticationTokenAudience) or signed by no one', async () => {
    const forGraph = await sidecarToken('https://graph.microsoft.com/.default');
    const refused = await armGet(arm, VM_PATH, forGraph, '2026-03-01');
    expect({ status: refused.status, code: refused.body.error?.code }).toEqual({
      status: 401,
      code: 'InvalidAuthenticationTokenAudience',
    });
    const [header, payload] = (await sidecarToken()).split('.');
    const forged = await armGet(arm, VM_PATH, `${header}.${payload}.Zm9yZ2Vk`, '2026-03-01');
    expect({ status: forged.status, code: forged.body.error?.code }).toEqual({
      status: 401,
      code: 'InvalidAuthenticationToken',
    });
    expect((await armGet(arm, VM_PATH, await sidecarToken(), '2026-03-01')).status).toBe(200);
  });

  it("refuses a token of another tenant than the subscription's (401 InvalidAuthenticationTokenTenant)", async () => {
    arm.seed({ ...seeded(), subscriptionTenantID: '00000000-0000-4000-8000-00000000beef' });
    const refused = await armGet(arm, VM_PATH, await sidecarToken(), '2026-03-01');
    expect({ status: refused.status, code: refused.body.error?.code }).toEqual({
      status: 401,
      code: 'InvalidAuthenticationTokenTenant',
    });
  });

  it('answers 403 AuthorizationFailed to a principal without a role assignment over the scope', async () => {
    const answer = await token(arm, {
      client_id: 'no-roles',
      client_secret: 'no-roles-secret',
      scope: `${arm.url}/.default`,
    });
    const refused = await armGet(arm, VM_PATH, answer.body.access_token as string, '2026-03-01');
    expect(refused.status).toBe(403);
    expect(refused.body.error).toEqual({
      code: 'AuthorizationFailed',
      message: expect.stringContaining(
        "does not have authorization to perform action 'Microsoft.Compute/virtualMachines/read' over scope",
      ) as unknown,
    });
  });

  it('refuses an api-version the resource type does not serve, naming the ones it does', async () => {
    const refused = await armGet(arm, VM_PATH, await sidecarToken(), '2099-01-01');
    expect(refused.status).toBe(400);
    expect(refused.body.error?.code).toBe('NoRegisteredProviderFound');
    expect(refused.body.error?.message).toContain("for type 'virtualMachines'");
    expect(refused.body.error?.message).toContain('2026-03-01');
    // Network's versions are not Compute's.
    const subnet = `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Network/virtualNetworks/prod-west-q8m4d-vnet/subnets/prod-west-q8m4d-worker-subnet`;
    expect((await armGet(arm, subnet, await sidecarToken(), '2026-03-01')).status).toBe(400);
    expect((await armGet(arm, subnet, await sidecarToken(), '2025-05-01')).status).toBe(200);
  });

  it("takes a federated assertion only as a JWT with the credential's issuer, subject and audience", async () => {
    const claims = {
      iss: 'https://oidc.prod-west.example.com',
      sub: 'system:serviceaccount:openshift-karpenter:karpenter',
      aud: ['openshift'],
      exp: Math.floor(Date.now() / 1000) + 600,
    };
    const assert = (assertion: string) =>
      token(arm, {
        client_id: 'operand-client',
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: assertion,
        scope: `${arm.url}/.default`,
      });
    expect((await assert(jwt(claims))).status).toBe(200);
    for (const [what, bad] of [
      ['issuer', { ...claims, iss: 'https://elsewhere.example.com' }],
      ['subject', { ...claims, sub: 'system:serviceaccount:default:default' }],
      ['audience', { ...claims, aud: ['api://AzureADTokenExchange'] }],
      ['expiry', { ...claims, exp: Math.floor(Date.now() / 1000) - 10 }],
    ] as const) {
      const answer = await assert(jwt(bad));
      expect([what, answer.status, answer.body.error]).toEqual([what, 401, 'invalid_client']);
    }
    expect((await assert('not-a-jwt')).status).toBe(401);
  });

  it('reports no PowerState in the instance view while the VM is being created', async () => {
    const compute = new ComputeManagementClient(arm.credential(), SUB, arm.clientOptions());
    const creating = await compute.virtualMachines.get(RG, 'aks-general-a', {
      expand: 'instanceView',
    });
    expect(creating.provisioningState).toBe('Creating');
    expect(creating.instanceView?.statuses?.map((s) => s.code)).toEqual([
      'ProvisioningState/creating',
    ]);
  });

  it('answers 429 with Retry-After when throttled, and the real client waits and retries', async () => {
    arm.throttle(1, 1);
    const network = new NetworkManagementClient(arm.credential(), SUB, arm.clientOptions());
    const started = Date.now();
    const subnet = await network.subnets.get(
      RG,
      'prod-west-q8m4d-vnet',
      'prod-west-q8m4d-worker-subnet',
    );
    expect(subnet.name).toBe('prod-west-q8m4d-worker-subnet');
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(arm.requests.map((r) => r.status)).toEqual([429, 200]);
    const throttled = await (async () => {
      arm.throttle(1, 7);
      return armGet(arm, VM_PATH, await sidecarToken(), '2026-03-01');
    })();
    expect({ status: throttled.status, retryAfter: throttled.retryAfter }).toEqual({
      status: 429,
      retryAfter: '7',
    });
    expect(throttled.body.error?.code).toBe('SubscriptionRequestsThrottled');
  });

  it("serves what MSAL reads for an authority it does not trust by name, and the fork's Resource Graph query", async () => {
    const discovery = await call(
      arm,
      'GET',
      `/common/discovery/instance?api-version=1.1&authorization_endpoint=${encodeURIComponent(`${arm.url}/${world.tenantID}/oauth2/v2.0/authorize`)}`,
      {},
    );
    expect(discovery.body.tenant_discovery_endpoint).toBe(
      `${arm.url}/${world.tenantID}/v2.0/.well-known/openid-configuration`,
    );
    const config = await call(
      arm,
      'GET',
      `/${world.tenantID}/v2.0/.well-known/openid-configuration`,
      {},
    );
    expect(config.body).toMatchObject({
      issuer: `${arm.url}/${world.tenantID}/v2.0`,
      token_endpoint: `${arm.url}/${world.tenantID}/oauth2/v2.0/token`,
    });
    // MSAL sends the OpenID Connect scopes beside the resource's /.default.
    const answer = await token(arm, {
      client_id: SIDECAR.clientId,
      client_secret: SIDECAR.clientSecret!,
      scope: `${arm.url}/.default openid offline_access profile`,
    });
    expect(answer.status).toBe(200);
    arm.addVirtualMachine({
      resourceGroup: RG,
      name: 'aks-general-b',
      location: 'eastus',
      computerName: 'aks-general-b',
      powerState: 'running',
      networkInterfaces: [],
      tags: {
        'karpenter.azure.com_cluster': 'prod-west-q8m4d',
        'karpenter.sh_nodepool': 'general',
      },
    });
    const query = (q: string) =>
      call(
        arm,
        'POST',
        '/providers/Microsoft.ResourceGraph/resources?api-version=2024-04-01',
        {
          authorization: `Bearer ${answer.body.access_token as string}`,
          'content-type': 'application/json',
        },
        JSON.stringify({
          subscriptions: [SUB],
          query: q,
          options: { resultFormat: 'objectArray' },
        }),
      );
    const listed = await query(
      `Resources | where type == "microsoft.compute/virtualmachines" | where resourceGroup == "${RG}" | where tags has_cs "karpenter.sh_nodepool" | where not(tags has_cs "karpenter.azure.com_aksmachine_nodeclaim")`,
    );
    expect((listed.body.data as { name: string }[]).map((v) => v.name)).toEqual(['aks-general-b']);
    expect((await query('Resources | take 5')).status).toBe(400);
  });
});
