/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call -- assertions poke into untyped JSON responses */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  ApiextensionsV1Api,
  AppsV1Api,
  CertificatesV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObject,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  Watch,
} from '@kubernetes/client-node';

import { FIXTURES_DIR, fixtureCrdFiles } from '../fixtures.js';
import { KubeApiServerEmulator, KubeObject, readYamlDir } from './index.js';

interface StatusBody {
  kind: string;
  reason: string;
  code: number;
  message: string;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    causes?: { reason: string; field?: string; message: string }[];
  };
}

async function failure(p: Promise<unknown>): Promise<StatusBody> {
  try {
    await p;
  } catch (e) {
    const err = e as { code?: number; body?: unknown };
    const body =
      typeof err.body === 'string'
        ? (JSON.parse(err.body) as StatusBody)
        : (err.body as StatusBody);
    expect(body.code).toBe(err.code);
    return body;
  }
  throw new Error('expected the request to fail');
}

function nodePool(name: string, spec: Record<string, unknown> = {}): KubeObject {
  return {
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
      ...spec,
    },
  };
}

const np = { group: 'karpenter.sh', version: 'v1', plural: 'nodepools' };
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

describe('KubeApiServerEmulator through @kubernetes/client-node', () => {
  const em = new KubeApiServerEmulator({ watchHistorySize: 50 });
  const kc = new KubeConfig();
  let core: CoreV1Api;
  let custom: CustomObjectsApi;
  let objects: KubernetesObjectApi;

  beforeAll(async () => {
    await em.start();
    em.loadCrdFiles(fixtureCrdFiles());
    kc.loadFromString(em.kubeconfigYaml());
    core = kc.makeApiClient(CoreV1Api);
    custom = kc.makeApiClient(CustomObjectsApi);
    objects = KubernetesObjectApi.makeApiClient(kc);
  });
  afterAll(async () => {
    await em.stop();
  });

  it('every CEL rule of the fixture CRDs compiles (none silently skipped)', () => {
    expect(em.celCompileFailures()).toEqual([]);
  });

  it('serves discovery and rejects a missing token with 401', async () => {
    const res = await em.fetch(`/apis/certificates.k8s.io/v1`, {
      headers: { authorization: `Bearer ${em.token}` },
    });
    const list = (await res.json()) as { resources: { name: string; verbs: string[] }[] };
    expect(list.resources.map((r) => r.name)).toEqual(
      expect.arrayContaining([
        'certificatesigningrequests',
        'certificatesigningrequests/status',
        'certificatesigningrequests/approval',
      ]),
    );
    const karp = (await (
      await em.fetch(`/apis/karpenter.sh/v1`, {
        headers: { authorization: `Bearer ${em.token}` },
      })
    ).json()) as {
      resources: { name: string; namespaced: boolean; kind: string }[];
    };
    expect(karp.resources).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'nodepools', namespaced: false, kind: 'NodePool' }),
      ]),
    );
    const anon = await em.fetch(`/api/v1/namespaces`);
    expect(anon.status).toBe(401);
    expect(((await anon.json()) as StatusBody).reason).toBe('Unauthorized');
  });

  it('accepts every fixture cluster object via server-side apply', async () => {
    const fixtures = readYamlDir(`${FIXTURES_DIR}/clusters`);
    expect(fixtures.length).toBeGreaterThan(10);
    for (const ns of new Set(
      fixtures.map((o) => o.metadata?.namespace).filter((n): n is string => !!n),
    )) {
      await core.createNamespace({ body: { metadata: { name: ns } } });
    }
    for (const o of fixtures) {
      const res = await objects.patch(
        o as KubernetesObject,
        undefined,
        undefined,
        'fixture-loader',
        true,
        PatchStrategy.ServerSideApply,
      );
      expect(res.metadata?.uid).toBeTruthy();
    }
    const infra = em.get('config.openshift.io/v1', 'Infrastructure', 'cluster');
    // status is a subresource: applying it to the main resource does not set it
    expect(infra?.status).toBeUndefined();
    const secret = await core.readNamespacedSecret({
      name: 'worker-user-data',
      namespace: 'openshift-machine-api',
    });
    expect(Buffer.from(secret.data?.userData ?? '', 'base64').toString()).toContain('ignition');
  });

  it('rejects invalid NodePools with 422 and API-server wording', async () => {
    const bad = nodePool('bad', { weight: 0 });
    ((bad.spec as any).template.spec.requirements as unknown[]).push({
      key: 'kubernetes.io/hostname',
      operator: 'Foo',
      values: ['a'],
    });
    delete (bad.spec as any).template.spec.nodeClassRef.kind;
    const s = await failure(custom.createClusterCustomObject({ ...np, body: bad }));
    expect(s).toMatchObject({
      kind: 'Status',
      code: 422,
      reason: 'Invalid',
      details: { name: 'bad', group: 'karpenter.sh', kind: 'NodePool' },
    });
    expect(s.message).toMatch(/^NodePool\.karpenter\.sh "bad" is invalid: \[/);
    const causes = s.details!.causes!;
    expect(causes).toEqual(
      expect.arrayContaining([
        {
          reason: 'FieldValueInvalid',
          field: 'spec.weight',
          message: 'Invalid value: 0: spec.weight in body should be greater than or equal to 1',
        },
        expect.objectContaining({
          reason: 'FieldValueNotSupported',
          field: 'spec.template.spec.requirements[1].operator',
        }),
        {
          reason: 'FieldValueRequired',
          field: 'spec.template.spec.nodeClassRef.kind',
          message: 'Required value',
        },
        // An unsupported value and a missing field block every CEL rule, as on a real
        // kube-apiserver (test/real-kubernetes/differential.real-spec.ts): said, not evaluated.
        {
          reason: 'FieldValueInvalid',
          field: '<nil>',
          message:
            'Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
        },
      ]),
    );
    // Without a blocking error the CEL rule is evaluated and refuses the restricted label.
    const restricted = nodePool('restricted');
    ((restricted.spec as any).template.spec.requirements as unknown[]).push({
      key: 'kubernetes.io/hostname',
      operator: 'In',
      values: ['a'],
    });
    const rule = await failure(custom.createClusterCustomObject({ ...np, body: restricted }));
    expect(rule.details?.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'spec.template.spec.requirements[1].key',
        message: 'Invalid value: "string": label "kubernetes.io/hostname" is restricted',
      },
    ]);
    const heavy = await failure(
      custom.createClusterCustomObject({ ...np, body: nodePool('heavy', { weight: 101 }) }),
    );
    expect(heavy.details?.causes?.[0]).toMatchObject({ field: 'spec.weight' });
    const name = await failure(
      custom.createClusterCustomObject({ ...np, body: nodePool('Not_A_Name') }),
    );
    expect(name.details?.causes?.[0]).toMatchObject({
      field: 'metadata.name',
      reason: 'FieldValueInvalid',
    });
    const cel = nodePool('restricted');
    (cel.spec as any).template.metadata = { labels: { 'karpenter.sh/nodepool': 'x' } };
    const celS = await failure(custom.createClusterCustomObject({ ...np, body: cel }));
    expect(celS.code).toBe(422);
    expect(celS.details?.causes?.map((c) => c.field)).toContain('spec.template.metadata.labels');
  });

  it('applies schema defaults, prunes unknown fields with a warning, rejects them when Strict', async () => {
    const body = nodePool('defaults');
    (body.spec as any).bogus = true;
    const res = await em.fetch(`/apis/karpenter.sh/v1/nodepools`, {
      method: 'POST',
      headers: { authorization: `Bearer ${em.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('warning')).toBe('299 - "unknown field \\"spec.bogus\\""');
    const created = (await res.json()) as any;
    expect(created.spec.bogus).toBeUndefined();
    expect(created.spec.template.spec.expireAfter).toBe('720h');
    expect(created.spec.disruption.budgets).toEqual([{ nodes: '10%' }]);
    const strict = await failure(
      custom.createClusterCustomObject({
        ...np,
        body: { ...nodePool('strict'), spec: { ...(body.spec as object) } },
        fieldValidation: 'Strict',
      }),
    );
    expect(strict).toMatchObject({ code: 400, reason: 'BadRequest' });
    expect(strict.message).toContain('unknown field "spec.bogus"');
    const ec2 = em.create({
      apiVersion: 'karpenter.k8s.aws/v1',
      kind: 'EC2NodeClass',
      metadata: { name: 'default' },
      spec: {
        role: 'worker',
        amiFamily: 'Custom',
        amiSelectorTerms: [{ id: 'ami-123' }],
        subnetSelectorTerms: [{ id: 'subnet-1' }],
        securityGroupSelectorTerms: [{ id: 'sg-1' }],
      },
    });
    expect((ec2.spec as any).metadataOptions).toMatchObject({
      httpTokens: 'required',
      httpEndpoint: 'enabled',
    });
  });

  it('tracks resourceVersion, generation, conflicts and the status subresource', async () => {
    const created = (await custom.createClusterCustomObject({
      ...np,
      body: nodePool('gen'),
    })) as KubeObject;
    expect(created.metadata?.generation).toBe(1);
    const dup = await failure(custom.createClusterCustomObject({ ...np, body: nodePool('gen') }));
    expect(dup).toMatchObject({
      code: 409,
      reason: 'AlreadyExists',
      message: 'nodepools.karpenter.sh "gen" already exists',
    });
    const labelled = (await custom.patchClusterCustomObject(
      { ...np, name: 'gen', body: { metadata: { labels: { a: 'b' } } } },
      merge,
    )) as KubeObject;
    expect(labelled.metadata?.generation).toBe(1);
    expect(Number(labelled.metadata?.resourceVersion)).toBeGreaterThan(
      Number(created.metadata?.resourceVersion),
    );
    const specPatched = (await custom.patchClusterCustomObject(
      { ...np, name: 'gen', body: { spec: { weight: 5 }, status: { foo: 'ignored' } } },
      merge,
    )) as KubeObject;
    expect(specPatched.metadata?.generation).toBe(2);
    expect(specPatched.status).toBeUndefined();
    const stale = await failure(
      custom.replaceClusterCustomObject({
        ...np,
        name: 'gen',
        body: {
          ...specPatched,
          metadata: { ...specPatched.metadata, resourceVersion: created.metadata?.resourceVersion },
        },
      }),
    );
    expect(stale).toMatchObject({ code: 409, reason: 'Conflict' });
    const withStatus = (await custom.patchClusterCustomObjectStatus(
      {
        ...np,
        name: 'gen',
        body: {
          spec: { weight: 99 },
          status: {
            conditions: [
              {
                type: 'Ready',
                status: 'True',
                reason: 'Ok',
                message: '',
                lastTransitionTime: '2024-01-01T00:00:00Z',
              },
            ],
          },
        },
      },
      merge,
    )) as KubeObject;
    expect((withStatus.spec as any).weight).toBe(5);
    expect(withStatus.metadata?.generation).toBe(2);
    expect((withStatus.status as any).conditions[0].type).toBe('Ready');
    const missing = await failure(custom.getClusterCustomObject({ ...np, name: 'nope' }));
    expect(missing).toMatchObject({
      code: 404,
      reason: 'NotFound',
      message: 'nodepools.karpenter.sh "nope" not found',
    });
    const nsMissing = await failure(
      core.createNamespacedConfigMap({ namespace: 'ghost', body: { metadata: { name: 'x' } } }),
    );
    expect(nsMissing).toMatchObject({
      code: 404,
      reason: 'NotFound',
      message: 'namespaces "ghost" not found',
    });
  });

  it('keeps objects with finalizers until the finalizers are removed', async () => {
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'fin', finalizers: ['example.com/hold'] } },
    });
    await core.deleteNamespacedConfigMap({ name: 'fin', namespace: 'default' });
    const held = await core.readNamespacedConfigMap({ name: 'fin', namespace: 'default' });
    expect(held.metadata?.deletionTimestamp).toBeTruthy();
    await core.patchNamespacedConfigMap(
      { name: 'fin', namespace: 'default', body: { metadata: { finalizers: null } } },
      merge,
    );
    expect(
      (await failure(core.readNamespacedConfigMap({ name: 'fin', namespace: 'default' }))).code,
    ).toBe(404);
  });

  it('a custom resource with finalizers: DELETE marks it, it stays until they are gone, watch sees MODIFIED then DELETED', async () => {
    const watch = new Watch(kc);
    const events: { type: string; deleting: boolean; finalizers?: string[] }[] = [];
    let done!: () => void;
    const finished = new Promise<void>((r) => (done = r));
    const req = await watch.watch(
      '/apis/karpenter.sh/v1/nodepools',
      { resourceVersion: em.resourceVersion, fieldSelector: 'metadata.name=held-pool' },
      (type, obj: KubeObject) => {
        events.push({
          type,
          deleting: !!obj.metadata?.deletionTimestamp,
          ...(obj.metadata?.finalizers ? { finalizers: obj.metadata.finalizers } : {}),
        });
        if (type === 'DELETED') done();
      },
      () => undefined,
    );
    try {
      const pool = nodePool('held-pool');
      pool.metadata!.finalizers = ['example.com/a', 'example.com/b'];
      await custom.createClusterCustomObject({ ...np, body: pool });
      const marked: any = await custom.deleteClusterCustomObject({ ...np, name: 'held-pool' });
      expect(marked.metadata.deletionTimestamp).toEqual(expect.any(String));
      const kept: any = await custom.getClusterCustomObject({ ...np, name: 'held-pool' });
      expect(kept.metadata.deletionTimestamp).toBe(marked.metadata.deletionTimestamp);
      // No finalizer may be added to an object being deleted.
      const refused = await failure(
        custom.patchClusterCustomObject(
          {
            ...np,
            name: 'held-pool',
            body: { metadata: { finalizers: ['example.com/a', 'example.com/b', 'example.com/c'] } },
          },
          merge,
        ),
      );
      expect(refused.code).toBe(422);
      expect(refused.message).toContain(
        'no new finalizers can be added if the object is being deleted',
      );
      // One finalizer removed: still there; the last one removed: gone.
      await custom.patchClusterCustomObject(
        { ...np, name: 'held-pool', body: { metadata: { finalizers: ['example.com/b'] } } },
        merge,
      );
      expect(em.get('karpenter.sh/v1', 'NodePool', 'held-pool')).toBeDefined();
      await custom.patchClusterCustomObject(
        { ...np, name: 'held-pool', body: { metadata: { finalizers: null } } },
        merge,
      );
      expect(
        (await failure(custom.getClusterCustomObject({ ...np, name: 'held-pool' }))).code,
      ).toBe(404);
      await finished;
    } finally {
      req.abort();
    }
    expect(events).toEqual([
      { type: 'ADDED', deleting: false, finalizers: ['example.com/a', 'example.com/b'] },
      { type: 'MODIFIED', deleting: true, finalizers: ['example.com/a', 'example.com/b'] },
      { type: 'MODIFIED', deleting: true, finalizers: ['example.com/b'] },
      expect.objectContaining({ type: 'DELETED', deleting: true }),
    ]);
  });

  it('server-side apply removes a whole keyed list item its manager no longer applies', async () => {
    const pod = (volumes: Record<string, unknown>[]): KubernetesObject =>
      ({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'ssa-volumes', namespace: 'default' },
        spec: {
          containers: [{ name: 'c', image: 'registry.example/c@sha256:' + 'a'.repeat(64) }],
          volumes,
        },
      }) as KubernetesObject;
    const token = {
      name: 'token',
      projected: { sources: [{ serviceAccountToken: { path: 't' } }] },
    };
    await objects.patch(
      pod([{ name: 'creds', secret: { secretName: 'creds' } }, token]),
      undefined,
      undefined,
      'alice',
      false,
      PatchStrategy.ServerSideApply,
    );
    const dropped = (await objects.patch(
      pod([token]),
      undefined,
      undefined,
      'alice',
      false,
      PatchStrategy.ServerSideApply,
    )) as { spec: { volumes: { name?: string }[] } };
    // Not the item stripped of its key and fields ({secret: {}}): the item itself is gone (the
    // ServiceAccount admission plugin's token volume is nobody's to drop).
    expect(
      dropped.spec.volumes.map((v) => v.name).filter((n) => !n?.startsWith('kube-api-access-')),
    ).toEqual(['token']);
  });

  it('server-side apply removes a map whose every key its manager stopped applying, not leaving {}', async () => {
    const cm = (data: Record<string, string> | undefined, labels?: Record<string, string>) =>
      ({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'ssa-empty-map', namespace: 'default', ...(labels ? { labels } : {}) },
        ...(data ? { data } : {}),
      }) as KubernetesObject;
    await objects.patch(
      cm({ team: 'payments', owner: 'sre' }, { tier: 'gold' }),
      undefined,
      undefined,
      'alice',
      false,
      PatchStrategy.ServerSideApply,
    );
    // Another manager's own map stays, even once alice's keys are gone from it.
    await objects.patch(
      cm(undefined, { keep: 'yes' }),
      undefined,
      undefined,
      'bob',
      false,
      PatchStrategy.ServerSideApply,
    );
    const cleared = (await objects.patch(
      cm(undefined),
      undefined,
      undefined,
      'alice',
      false,
      PatchStrategy.ServerSideApply,
    )) as { data?: unknown; metadata: { labels?: unknown } };
    expect(cleared).not.toHaveProperty('data');
    expect(cleared.metadata.labels).toEqual({ keep: 'yes' });
    // Applying an empty map on purpose keeps it.
    const empty = (await objects.patch(
      cm({}),
      undefined,
      undefined,
      'alice',
      false,
      PatchStrategy.ServerSideApply,
    )) as { data?: unknown };
    expect(empty.data).toEqual({});
  });

  it('server-side apply tracks ownership, removes dropped fields, conflicts and forces', async () => {
    const cm = (
      data: Record<string, string>,
    ): KubernetesObject & { data: Record<string, string> } => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'ssa', namespace: 'default' },
      data,
    });
    const first = await objects.patch(
      cm({ a: '1', b: '2' }),
      undefined,
      undefined,
      'alice',
      false,
      PatchStrategy.ServerSideApply,
    );
    expect(first.metadata?.managedFields).toEqual([
      expect.objectContaining({
        manager: 'alice',
        operation: 'Apply',
        fieldsV1: { 'f:data': { 'f:a': {}, 'f:b': {} } },
      }),
    ]);
    const dropped = (await objects.patch(
      cm({ a: '1' }),
      undefined,
      undefined,
      'alice',
      false,
      PatchStrategy.ServerSideApply,
    )) as any;
    expect(dropped.data).toEqual({ a: '1' });
    const conflict = await failure(
      objects.patch(
        cm({ a: 'bob' }),
        undefined,
        undefined,
        'bob',
        false,
        PatchStrategy.ServerSideApply,
      ),
    );
    expect(conflict).toMatchObject({ code: 409, reason: 'Conflict' });
    expect(conflict.message).toBe('Apply failed with 1 conflict: conflict with "alice": .data.a');
    expect(conflict.details?.causes).toEqual([
      {
        reason: 'FieldManagerConflict',
        message: 'conflict with "alice"',
        field: '.data.a',
      },
    ]);
    const sameValue = await objects.patch(
      cm({ a: '1' }),
      undefined,
      undefined,
      'carol',
      false,
      PatchStrategy.ServerSideApply,
    );
    expect(sameValue.metadata?.managedFields?.map((m) => m.manager)).toEqual(['alice', 'carol']);
    const forced = (await objects.patch(
      cm({ a: 'bob' }),
      undefined,
      undefined,
      'bob',
      true,
      PatchStrategy.ServerSideApply,
    )) as any;
    expect(forced.data.a).toBe('bob');
    expect(forced.metadata.managedFields.find((m: any) => m.manager === 'alice')).toBeUndefined();
    const missingManager = await em.fetch(`/api/v1/namespaces/default/configmaps/ssa`, {
      method: 'PATCH',
      headers: {
        authorization: `Bearer ${em.token}`,
        'content-type': 'application/apply-patch+yaml',
      },
      body: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\n',
    });
    expect(missingManager.status).toBe(400);
    const keyed = await objects.patch(
      nodePool('ssa-np') as KubernetesObject,
      undefined,
      undefined,
      'sidecar',
      false,
      PatchStrategy.ServerSideApply,
    );
    expect((keyed as any).spec.template.spec.expireAfter).toBe('720h');
    expect(keyed.metadata?.managedFields?.[0]?.fieldsV1).not.toHaveProperty([
      'f:spec',
      'f:template',
      'f:spec',
      'f:expireAfter',
    ]);
  });

  it('streams watch events and answers an expired resourceVersion with 410', async () => {
    const watch = new Watch(kc);
    const events: { type: string; name?: string }[] = [];
    const start = em.resourceVersion;
    let done!: () => void;
    const finished = new Promise<void>((r) => (done = r));
    const req = await watch.watch(
      '/api/v1/namespaces/default/configmaps',
      { resourceVersion: start, labelSelector: 'app in (w)' },
      (type, obj: KubeObject) => {
        events.push({ type, name: obj.metadata?.name });
        if (type === 'DELETED') done();
      },
      () => undefined,
    );
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'w1', labels: { app: 'w' } } },
    });
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'other' } },
    });
    await core.patchNamespacedConfigMap(
      { name: 'w1', namespace: 'default', body: { data: { x: 'y' } } },
      merge,
    );
    await core.deleteNamespacedConfigMap({ name: 'w1', namespace: 'default' });
    await finished;
    req.abort();
    expect(events).toEqual([
      { type: 'ADDED', name: 'w1' },
      { type: 'MODIFIED', name: 'w1' },
      { type: 'DELETED', name: 'w1' },
    ]);
    for (let i = 0; i < 60; i++)
      em.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `churn-${i}`, namespace: 'default' },
      });
    const expired = await new Promise<{ type: string; obj: StatusBody }>((resolve) => {
      void watch.watch(
        '/api/v1/configmaps',
        { resourceVersion: start },
        (type, obj: StatusBody) => resolve({ type, obj }),
        () => undefined,
      );
    });
    expect(expired.type).toBe('ERROR');
    expect(expired.obj).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' });
  });

  it('garbage-collects dependents: with finalizers they get a deletionTimestamp and wait', () => {
    const owner = em.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'gc-owner', namespace: 'default' },
    });
    const ref = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'gc-owner',
      uid: owner.metadata!.uid!,
    };
    em.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'gc-plain', namespace: 'default', ownerReferences: [ref] },
    });
    em.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'gc-held',
        namespace: 'default',
        ownerReferences: [ref],
        finalizers: ['example.com/hold'],
      },
    });
    em.delete('v1', 'ConfigMap', 'gc-owner', 'default');
    expect(em.get('v1', 'ConfigMap', 'gc-plain', 'default')).toBeUndefined();
    const held = em.get('v1', 'ConfigMap', 'gc-held', 'default');
    expect(held?.metadata?.deletionTimestamp).toBeDefined();
    em.patch('v1', 'ConfigMap', 'gc-held', 'default', { metadata: { finalizers: null } });
    expect(em.get('v1', 'ConfigMap', 'gc-held', 'default')).toBeUndefined();
  });

  it('records the requesting user and groups on a CSR, whatever the body claims', async () => {
    const token = em.addUser(
      'system:serviceaccount:openshift-machine-config-operator:node-bootstrapper',
      ['system:serviceaccounts', 'system:authenticated'],
    );
    em.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'system-bootstrap-node-bootstrapper' },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: 'system:node-bootstrapper',
      },
      subjects: [
        {
          kind: 'ServiceAccount',
          name: 'node-bootstrapper',
          namespace: 'openshift-machine-config-operator',
        },
      ],
    });
    const bootstrapper = new KubeConfig();
    bootstrapper.loadFromString(em.kubeconfigYaml('default', token));
    const request = Buffer.from(
      '-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n',
    ).toString('base64');
    const csr = await bootstrapper
      .makeApiClient(CertificatesV1Api)
      .createCertificateSigningRequest({
        body: {
          metadata: { name: 'node-csr-user' },
          spec: {
            request,
            signerName: 'kubernetes.io/kube-apiserver-client-kubelet',
            usages: ['client auth'],
            username: 'system:admin',
            groups: ['system:masters'],
          },
        },
      });
    expect(csr.spec.username).toBe(
      'system:serviceaccount:openshift-machine-config-operator:node-bootstrapper',
    );
    expect(csr.spec.groups).toEqual(['system:serviceaccounts', 'system:authenticated']);
    const stranger = await em.fetch(`/api/v1/namespaces`, {
      headers: { authorization: 'Bearer not-a-token' },
    });
    expect(stranger.status).toBe(401);
  });

  it('approves a CSR only through the approval subresource', async () => {
    const certs = kc.makeApiClient(CertificatesV1Api);
    const request = Buffer.from(
      '-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n',
    ).toString('base64');
    const csr = await certs.createCertificateSigningRequest({
      body: {
        metadata: { name: 'node-csr-1' },
        spec: {
          request,
          signerName: 'kubernetes.io/kube-apiserver-client-kubelet',
          usages: ['client auth'],
        },
      },
    });
    const approved = await certs.replaceCertificateSigningRequestApproval({
      name: 'node-csr-1',
      body: {
        ...csr,
        spec: { ...csr.spec, usages: ['server auth'] },
        status: {
          conditions: [{ type: 'Approved', status: 'True', reason: 'AutoApproved', message: 'ok' }],
        },
      },
    });
    expect(approved.status?.conditions?.[0]).toMatchObject({ type: 'Approved', status: 'True' });
    expect(approved.spec.usages).toEqual(['client auth']);
    const both = await failure(
      certs.replaceCertificateSigningRequestApproval({
        name: 'node-csr-1',
        body: {
          ...approved,
          status: {
            conditions: [
              ...(approved.status?.conditions ?? []),
              { type: 'Denied', status: 'True', reason: 'No', message: 'no' },
            ],
          },
        },
      }),
    );
    expect(both.code).toBe(422);
  });

  it('registers a CRD created through the API and deploys/updates apps', async () => {
    const ext = kc.makeApiClient(ApiextensionsV1Api);
    await ext.createCustomResourceDefinition({
      body: {
        metadata: { name: 'widgets.example.com' },
        spec: {
          group: 'example.com',
          scope: 'Namespaced',
          names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              subresources: { status: {} },
              schema: {
                openAPIV3Schema: {
                  type: 'object',
                  properties: {
                    spec: { type: 'object', properties: { size: { type: 'integer', maximum: 3 } } },
                  },
                },
              },
            },
          ],
        },
      },
    });
    const w = {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w', namespace: 'default' },
      spec: { size: 2 },
    };
    await custom.createNamespacedCustomObject({
      group: 'example.com',
      version: 'v1',
      plural: 'widgets',
      namespace: 'default',
      body: w,
    });
    const tooBig = await failure(
      custom.createNamespacedCustomObject({
        group: 'example.com',
        version: 'v1',
        plural: 'widgets',
        namespace: 'default',
        body: { ...w, metadata: { name: 'big', namespace: 'default' }, spec: { size: 4 } },
      }),
    );
    expect(tooBig.details?.causes?.[0]?.field).toBe('spec.size');
    const apps = kc.makeApiClient(AppsV1Api);
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: {
        metadata: { name: 'karpenter' },
        spec: {
          selector: { matchLabels: { app: 'k' } },
          template: {
            metadata: { labels: { app: 'k' } },
            spec: { containers: [{ name: 'c', image: 'img:1' }] },
          },
        },
      },
    });
    em.setDeploymentAvailable('default', 'karpenter', 1);
    const d = await apps.readNamespacedDeployment({ name: 'karpenter', namespace: 'default' });
    expect(d.status?.availableReplicas).toBe(1);
    expect(d.metadata?.generation).toBe(1);
  });
});
