import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  CAPI_OPERAND_NAMESPACE,
  OPERAND_MANAGEMENT_KUBECONFIG_SECRET,
} from '@fleet/cloud-provider';
import { GENERAL_NODEPOOL, startCapiHarness, until, type CapiHarness } from './harness.js';

const DAY = 24 * 3600 * 1000;

/**
 * The operand's management token (a separate management cluster) is renewed once half its 7-day
 * life is gone by the sidecar's own timer, with no order: here the timer runs every 200 ms and
 * the Secret is aged by hand, as four days would age it.
 */
describe('Cluster API: the management token is renewed without an order', () => {
  let h: CapiHarness;
  const secret = () =>
    h.pair.workload.get(
      'v1',
      'Secret',
      OPERAND_MANAGEMENT_KUBECONFIG_SECRET,
      CAPI_OPERAND_NAMESPACE,
    );
  const field = (key: string) =>
    Buffer.from(
      (secret()?.data as Record<string, string> | undefined)?.[key] ?? '',
      'base64',
    ).toString('utf8');
  const tokenRequests = () =>
    h.pair.management.requestCount((e) => e.method === 'POST' && e.path.endsWith('/token'));

  beforeAll(async () => {
    h = await startCapiHarness({ credentialRenewalMs: 200 });
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('a token past half its life is replaced on the next check; a young one is left alone', async () => {
    await h.runtime.apply(
      h.order({ enabled: true, clusterAutoscalerMode: 'KEEP', nodePools: [GENERAL_NODEPOOL] }),
    );
    const first = field('kubeconfig');
    expect(first).toContain('token: ');
    expect(Date.parse(field('expires-at')) - Date.now()).toBeGreaterThan(6.9 * DAY);
    const issued = tokenRequests();
    expect(issued).toBeGreaterThan(0);

    // Young: several checks later, still the same token and no new TokenRequest.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(tokenRequests()).toBe(issued);
    expect(field('kubeconfig')).toBe(first);

    // Aged as four days would: three days left of seven.
    const aged = new Date(Date.now() + 3 * DAY).toISOString();
    h.pair.workload.patch(
      'v1',
      'Secret',
      OPERAND_MANAGEMENT_KUBECONFIG_SECRET,
      CAPI_OPERAND_NAMESPACE,
      {
        data: { 'expires-at': Buffer.from(aged).toString('base64') },
      },
    );
    await until(
      () => (field('kubeconfig') !== first ? true : undefined),
      'a new token in the Secret',
      // The renewal re-applies the whole order (CRDs, operand, RBAC) behind any apply in flight:
      // a few seconds idle, past 15 s once under a loaded three-worker run.
      40_000,
    );
    expect(Date.parse(field('expires-at')) - Date.now()).toBeGreaterThan(6.9 * DAY);
    expect(tokenRequests()).toBe(issued + 1);
    // The new kubeconfig's token works on the management cluster.
    const token = /token: "([^"]+)"/.exec(field('kubeconfig'))?.[1];
    expect(token).toBeDefined();
    expect(h.pair.management.authenticate(`Bearer ${token}`)).toBeDefined();
  }, 90_000);
});
