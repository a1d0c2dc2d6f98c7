import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';

import { fixtureCrdFiles } from '../fixtures.js';
import { KubeApiServerEmulator, type KubeObject } from './index.js';

interface Answer {
  status: number;
  body: KubeObject & { reason?: string; message?: string };
}

// dryRun=All: every write verb runs defaulting, validation and admission (RBAC, escalation
// checks) and answers what it would store; nothing is stored, no resourceVersion moves, no watch
// event is sent.
describe('dryRun=All', () => {
  const em = new KubeApiServerEmulator();
  const events: string[] = [];
  const stops: (() => void)[] = [];
  let rvBefore: string;

  const call = async (
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
    token = em.token,
  ): Promise<Answer> => {
    const res = await em.fetch(path, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
      ...(body === undefined
        ? {}
        : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Answer['body'] };
  };

  const nodePool = (name: string, extra: Record<string, unknown> = {}): KubeObject => ({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: {
      template: {
        spec: {
          requirements: [
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
          ],
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
        },
      },
      ...extra,
    },
  });

  beforeAll(async () => {
    await em.start();
    em.loadCrdFiles(fixtureCrdFiles());
    em.create(nodePool('existing'));
    em.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'held', namespace: 'default', finalizers: ['example.com/keep'] },
      data: { a: '1' },
    });
    em.apply(
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'owned', namespace: 'default' },
        data: { owner: 'alice' },
      },
      { fieldManager: 'alice' },
    );
    for (const [apiVersion, kind] of [
      ['karpenter.sh/v1', 'NodePool'],
      ['v1', 'ConfigMap'],
    ] as const)
      stops.push(
        em.watch(apiVersion, kind, (type, o) => events.push(`${type} ${o.metadata?.name ?? ''}`), {
          resourceVersion: em.resourceVersion,
        }),
      );
  });
  beforeEach(() => {
    events.length = 0;
    rvBefore = em.resourceVersion;
  });
  const nothingStored = () => {
    expect(em.resourceVersion).toBe(rvBefore);
    expect(events).toEqual([]);
  };
  afterAll(async () => {
    for (const stop of stops) stop();
    await em.stop();
  });

  it('create: answers the defaulted object it would store, stores nothing', async () => {
    const r = await call('POST', '/apis/karpenter.sh/v1/nodepools?dryRun=All', nodePool('dry'));
    expect(r.status).toBe(201);
    expect(r.body.metadata).toMatchObject({ name: 'dry', generation: 1, uid: expect.any(String) });
    expect(r.body.metadata?.resourceVersion).toBeUndefined();
    expect(r.body.metadata?.managedFields?.[0]).toMatchObject({ operation: 'Update' });
    expect((r.body.spec as { disruption: unknown }).disruption).toMatchObject({
      budgets: [{ nodes: '10%' }],
    });
    expect(em.get('karpenter.sh/v1', 'NodePool', 'dry')).toBeUndefined();
    nothingStored();
  });

  it('create: validation still refuses, with the same 422', async () => {
    const r = await call(
      'POST',
      '/apis/karpenter.sh/v1/nodepools?dryRun=All',
      nodePool('bad', { weight: 1000 }),
    );
    expect(r.status).toBe(422);
    expect(r.body.reason).toBe('Invalid');
    expect(r.body.message).toContain('spec.weight');
    const dup = await call(
      'POST',
      '/apis/karpenter.sh/v1/nodepools?dryRun=All',
      nodePool('existing'),
    );
    expect(dup.status).toBe(409);
    nothingStored();
  });

  it('authorization and admission run: a user without create is refused', async () => {
    const token = em.addUser('mallory', ['system:authenticated']);
    const r = await call(
      'POST',
      '/api/v1/namespaces/default/configmaps?dryRun=All',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } },
      'application/json',
      token,
    );
    expect(r.status).toBe(403);
    const role = await call('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles?dryRun=All', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'ok' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
    });
    expect(role.status).toBe(201);
    expect(em.get('rbac.authorization.k8s.io/v1', 'ClusterRole', 'ok')).toBeUndefined();
    nothingStored();
  });

  it('update, merge/JSON/strategic patch: the new object, generation moved, nothing stored', async () => {
    const live = em.get('karpenter.sh/v1', 'NodePool', 'existing')!;
    const put = await call('PUT', '/apis/karpenter.sh/v1/nodepools/existing?dryRun=All', {
      ...live,
      spec: { ...(live.spec as object), weight: 7 },
    });
    expect(put.status).toBe(200);
    expect(put.body.metadata?.generation).toBe(2);
    expect((put.body.spec as { weight: number }).weight).toBe(7);
    const merge = await call(
      'PATCH',
      '/apis/karpenter.sh/v1/nodepools/existing?dryRun=All',
      { spec: { weight: 9 } },
      'application/merge-patch+json',
    );
    expect((merge.body.spec as { weight: number }).weight).toBe(9);
    const json = await call(
      'PATCH',
      '/api/v1/namespaces/default/configmaps/held?dryRun=All',
      [{ op: 'add', path: '/data/b', value: '2' }],
      'application/json-patch+json',
    );
    expect(json.body.data).toEqual({ a: '1', b: '2' });
    const strategic = await call(
      'PATCH',
      '/api/v1/namespaces/default/configmaps/held?dryRun=All',
      { data: { c: '3' } },
      'application/strategic-merge-patch+json',
    );
    expect(strategic.body.data).toEqual({ a: '1', c: '3' });
    expect(em.get('karpenter.sh/v1', 'NodePool', 'existing')?.spec).toEqual(live.spec);
    expect(em.get('v1', 'ConfigMap', 'held', 'default')?.data).toEqual({ a: '1' });
    nothingStored();
  });

  it('server-side apply: conflicts still 409, a forced apply answers the result only', async () => {
    const applied =
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: owned\ndata:\n  owner: bob\n';
    const conflict = await call(
      'PATCH',
      '/api/v1/namespaces/default/configmaps/owned?dryRun=All&fieldManager=bob',
      applied,
      'application/apply-patch+yaml',
    );
    expect(conflict.status).toBe(409);
    const forced = await call(
      'PATCH',
      '/api/v1/namespaces/default/configmaps/owned?dryRun=All&fieldManager=bob&force=true',
      applied,
      'application/apply-patch+yaml',
    );
    expect(forced.status).toBe(200);
    expect(forced.body.data).toEqual({ owner: 'bob' });
    expect(forced.body.metadata?.managedFields?.map((m) => m.manager)).toEqual(['bob']);
    const created = await call(
      'PATCH',
      '/api/v1/namespaces/default/configmaps/new?dryRun=All&fieldManager=bob',
      applied.replace('owned', 'new'),
      'application/apply-patch+yaml',
    );
    expect(created.status).toBe(201);
    expect(em.get('v1', 'ConfigMap', 'new', 'default')).toBeUndefined();
    expect(em.get('v1', 'ConfigMap', 'owned', 'default')?.data).toEqual({ owner: 'alice' });
    nothingStored();
  });

  it('status subresource writes are dry too', async () => {
    const r = await call(
      'PATCH',
      '/apis/karpenter.sh/v1/nodepools/existing/status?dryRun=All',
      { status: { nodes: 3 } },
      'application/merge-patch+json',
    );
    expect(r.status).toBe(200);
    expect((r.body.status as { nodes: number }).nodes).toBe(3);
    expect(em.get('karpenter.sh/v1', 'NodePool', 'existing')?.status).toBeUndefined();
    nothingStored();
  });

  it('delete: an object with finalizers comes back marked, and stays unmarked', async () => {
    const held = await call('DELETE', '/api/v1/namespaces/default/configmaps/held?dryRun=All');
    expect(held.status).toBe(200);
    expect(held.body.metadata?.deletionTimestamp).toEqual(expect.any(String));
    expect(
      em.get('v1', 'ConfigMap', 'held', 'default')?.metadata?.deletionTimestamp,
    ).toBeUndefined();
    const plain = await call('DELETE', '/apis/karpenter.sh/v1/nodepools/existing?dryRun=All');
    expect(plain.status).toBe(200);
    expect(em.get('karpenter.sh/v1', 'NodePool', 'existing')).toBeDefined();
    const collection = await call('DELETE', '/api/v1/namespaces/default/configmaps?dryRun=All');
    expect(collection.status).toBe(200);
    expect(em.list('v1', 'ConfigMap', 'default').map((c) => c.metadata?.name)).toEqual(
      expect.arrayContaining(['held', 'owned']),
    );
    nothingStored();
  });

  it('a dryRun value other than All is refused', async () => {
    const r = await call('DELETE', '/apis/karpenter.sh/v1/nodepools/existing?dryRun=true');
    expect(r.status).toBe(422);
    expect(r.body.message).toBe(
      'DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: "true": supported values: "All"',
    );
    const create = await call(
      'POST',
      '/apis/karpenter.sh/v1/nodepools?dryRun=Server',
      nodePool('x'),
    );
    expect(create.body.message).toBe(
      'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: "Server": supported values: "All"',
    );
    nothingStored();
  });
});
