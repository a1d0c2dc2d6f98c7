import { describe, expect, it } from '@jest/globals';
import { InMemoryClusterObjectReader } from '@fleet/discovery';
import { CLUSTER_API_DRIVER } from './driver.js';
import { CAPI_OPERAND_NAMESPACE, OPERAND_MANAGEMENT_KUBECONFIG_SECRET } from './operand.js';
import type { ClusterApiRenderInfrastructure } from './provider.js';
import type { KubeObject } from '../types.js';

const DAY = 24 * 3600 * 1000;
const SERVER = 'https://management.example.com:6443';
const T0 = Date.parse('2026-12-01T00:00:00Z');
const infra = {
  clusterName: 'capi-east',
  namespace: 'capi-east',
} as ClusterApiRenderInfrastructure;

/**
 * The operand's management token (separate management cluster) is due for renewal once half its
 * 7-day life is gone; `credentialsDue` is what the sidecar's timer asks, with the driver's clock.
 */
describe('Cluster API driver: the management token falls due with time', () => {
  function driverAt(clock: { now: number }, secret: () => KubeObject | undefined) {
    let issued = 0;
    const driver = CLUSTER_API_DRIVER.create({
      reader: () => new InMemoryClusterObjectReader([secret()].filter(Boolean)),
      env: { CLUSTER_API_CLUSTER_NAME: 'capi-east', CLUSTER_API_NAMESPACE: 'capi-east' },
      sameApiServer: false,
      now: () => clock.now,
      connection: () => ({ server: SERVER }),
      requestToken: (_target, _ns, _sa, seconds) =>
        Promise.resolve({
          token: `token-${++issued}`,
          expirationTimestamp: new Date(clock.now + seconds * 1000).toISOString(),
        }),
    });
    return { driver, issued: () => issued };
  }

  it('is due without a Secret, not while the token is young, due past half its life; renewal makes it young again', async () => {
    const clock = { now: T0 };
    let secret: KubeObject | undefined;
    const { driver, issued } = driverAt(clock, () => secret);
    await expect(driver.credentialsDue!()).resolves.toBe(true);

    const render = async () => {
      const [out] = await driver.renderAfterApply!(infra, {} as never);
      secret = out!.object;
      return secret;
    };
    const first = await render();
    expect(first.metadata).toMatchObject({
      name: OPERAND_MANAGEMENT_KUBECONFIG_SECRET,
      namespace: CAPI_OPERAND_NAMESPACE,
    });
    expect(issued()).toBe(1);
    await expect(driver.credentialsDue!()).resolves.toBe(false);

    clock.now = T0 + 3 * DAY; // 4 days left of 7: kept
    await expect(driver.credentialsDue!()).resolves.toBe(false);
    await render();
    expect(issued()).toBe(1);

    clock.now = T0 + 3.6 * DAY; // past half its life
    await expect(driver.credentialsDue!()).resolves.toBe(true);
    const renewed = await render();
    expect(issued()).toBe(2);
    expect(renewed.data).not.toEqual(first.data);
    await expect(driver.credentialsDue!()).resolves.toBe(false);
  });

  it('is never due on one API server (no token is handed on)', async () => {
    const driver = CLUSTER_API_DRIVER.create({
      reader: () => new InMemoryClusterObjectReader([]),
      env: {},
      sameApiServer: true,
    });
    await expect(driver.credentialsDue!()).resolves.toBe(false);
  });
});
