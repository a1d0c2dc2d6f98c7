import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KubeApiServerEmulator } from '@fleet/testing';
import { KubeConfig } from '@kubernetes/client-node';
import { ClusterClient, UnknownKindError } from './cluster-client.js';

/** A ClusterClient on an API-server emulator of its own, started and stopped with the suite. */
function clientOnEmulator(timeoutMs?: number) {
  const em = new KubeApiServerEmulator();
  const ctx = { em, client: undefined as unknown as ClusterClient };
  beforeAll(async () => {
    await em.start();
    const kc = new KubeConfig();
    kc.loadFromString(em.kubeconfigYaml());
    ctx.client = new ClusterClient(kc, timeoutMs);
  });
  afterAll(() => em.stop());
  return ctx;
}

describe('ClusterClient: every API-server request has a deadline', () => {
  // Short enough to wait out, long enough for the request to reach the emulator on a loaded
  // machine (at 2 s, a CI run once gave up before the emulator had seen it).
  const ctx = clientOnEmulator(4_000);
  const em = ctx.em;

  it('gives up on a request the API server never answers, and the next one works', async () => {
    const held = em.stallRequests('GET', '/api/v1/namespaces', 1);
    const started = Date.now();
    await expect(ctx.client.list('v1', 'Namespace')).rejects.toThrow(/timeout|abort/i);
    expect(held()).toBe(1);
    // Bounded by the deadline, not by the (never) answer; generous for a loaded machine.
    expect(Date.now() - started).toBeLessThan(12_000);
    const names = (await ctx.client.list('v1', 'Namespace')).map((n) => n.metadata?.name);
    expect(names).toContain('kube-system');
  });

  it('approves through /approval within the deadline too', async () => {
    const held = em.stallRequests(
      'GET',
      '/apis/certificates.k8s.io/v1/certificatesigningrequests/',
      1,
    );
    await expect(
      ctx.client.addCsrCondition('csr-nowhere', {
        type: 'Approved',
        status: 'True',
        reason: 'KarpenterCSRApprove',
        message: 'Auto approved by karpenter_machine_approver',
      }),
    ).rejects.toThrow(/timeout|abort/i);
    expect(held()).toBe(1);
  });
});

describe('ClusterClient: reads of what is not there', () => {
  const ctx = clientOnEmulator();

  it('reads an absent object, and one of an API group not served, as undefined; an unknown kind of a served group is an error', async () => {
    expect(
      await ctx.client.read({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: 'absent',
        namespace: 'default',
      }),
    ).toBeUndefined();
    expect(
      await ctx.client.read({ apiVersion: 'nothing.example.com/v1', kind: 'Thing', name: 'x' }),
    ).toBeUndefined();
    await expect(
      ctx.client.read({ apiVersion: 'v1', kind: 'NoSuchKind', name: 'x' }),
    ).rejects.toThrow(UnknownKindError);
  });
});

describe('ClusterClient: writes send what they are given', () => {
  const ctx = clientOnEmulator();
  const em = ctx.em;

  // The client serializes a built-in kind through its typed model; a plain object with the
  // wire names (`default`, `enum`, `x-kubernetes-validations`) lost those fields on the way.
  it("applies a CRD with its schema's defaults, enums and CEL rules, and the API server defaults by them", async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Cluster',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: {
                    type: 'object',
                    'x-kubernetes-validations': [
                      { rule: 'self.size != "huge"', message: 'no huge widgets' },
                    ],
                    properties: {
                      size: { type: 'string', enum: ['small', 'huge'], default: 'small' },
                    },
                  },
                },
              },
            },
          },
        ],
      },
    };
    await ctx.client.apply(crd);
    expect(
      em.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'widgets.example.com'),
    ).toMatchObject({
      spec: {
        versions: [
          {
            schema: {
              openAPIV3Schema: {
                properties: {
                  spec: {
                    'x-kubernetes-validations': [{ rule: 'self.size != "huge"' }],
                    properties: { size: { enum: ['small', 'huge'], default: 'small' } },
                  },
                },
              },
            },
          },
        ],
      },
    });
    const widget = await ctx.client.dryRunApply({
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w' },
      spec: {},
    });
    expect((widget as unknown as { spec: { size: string } }).spec.size).toBe('small');
    await expect(
      ctx.client.dryRunApply({
        apiVersion: 'example.com/v1',
        kind: 'Widget',
        metadata: { name: 'w' },
        spec: { size: 'huge' },
      }),
    ).rejects.toMatchObject({ code: 422 });
    expect(em.get('example.com/v1', 'Widget', 'w')).toBeUndefined();
  });
});
