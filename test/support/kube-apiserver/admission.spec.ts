import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { KubeApiServerEmulator, type KubeObject } from './index.js';

interface Answer {
  status: number;
  warning: string | null;
  body: KubeObject & {
    reason?: string;
    message?: string;
    details?: { causes?: { message: string }[] };
  };
}

const RBAC = 'rbac.authorization.k8s.io/v1';
const VAP = 'admissionregistration.k8s.io/v1';

describe('admission', () => {
  const em = new KubeApiServerEmulator();
  let builder: string;
  let mallory: string;

  const call = async (
    token: string,
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
  ): Promise<Answer> => {
    const res = await em.fetch(path, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return {
      status: res.status,
      warning: res.headers.get('warning'),
      body: (await res.json()) as Answer['body'],
    };
  };
  const configMap = (name: string, extra: Partial<KubeObject> = {}, ns = 'apps'): KubeObject => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: ns, ...extra.metadata },
    data: { tier: 'gold', ...(extra.data as object) },
  });
  const deployment = (name: string, replicas: number, labels: Record<string, string> = {}) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'c', image: 'c:1' }] },
      },
    },
  });
  const policy = (name: string, spec: Record<string, unknown>): KubeObject => ({
    apiVersion: VAP,
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec,
  });
  const binding = (name: string, spec: Record<string, unknown>): KubeObject => ({
    apiVersion: VAP,
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name },
    spec: { policyName: name, validationActions: ['Deny'], ...spec },
  });
  const rules = (resources: string[], operations = ['CREATE', 'UPDATE'], apiGroups = ['']) => ({
    resourceRules: [{ apiGroups, apiVersions: ['v1'], operations, resources }],
  });

  beforeAll(async () => {
    await em.start();
    builder = em.addUser('builder', ['system:authenticated']);
    mallory = em.addUser('mallory', ['system:authenticated']);
    em.seed(
      [
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apps' } },
        {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: 'prod', labels: { env: 'prod' } },
        },
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'dev', labels: { env: 'dev' } } },
        {
          apiVersion: RBAC,
          kind: 'ClusterRole',
          metadata: { name: 'editor' },
          rules: [
            {
              apiGroups: ['', 'apps'],
              resources: ['configmaps', 'secrets', 'deployments'],
              verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'],
            },
          ],
        },
        {
          apiVersion: RBAC,
          kind: 'ClusterRoleBinding',
          metadata: { name: 'editors' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'editor' },
          subjects: [
            { kind: 'User', name: 'builder' },
            { kind: 'User', name: 'mallory' },
          ],
        },
        deployment('web', 1) as KubeObject,
      ].map((o) =>
        o.kind === 'Deployment' ? { ...o, metadata: { ...o.metadata, namespace: 'apps' } } : o,
      ),
    );
  });
  afterAll(async () => {
    await em.stop();
  });

  describe('OwnerReferencesPermissionEnforcement', () => {
    const owner = () => {
      const web = em.get('apps/v1', 'Deployment', 'web', 'apps')!;
      return { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: web.metadata!.uid! };
    };

    it('blockOwnerDeletion needs update on the owner’s finalizers subresource', async () => {
      const plain = await call(builder, 'POST', '/api/v1/namespaces/apps/configmaps', {
        ...configMap('child'),
        metadata: { name: 'child', ownerReferences: [owner()] },
      });
      expect(plain.status).toBe(201);
      const blocking = await call(builder, 'POST', '/api/v1/namespaces/apps/configmaps', {
        ...configMap('blocking'),
        metadata: { name: 'blocking', ownerReferences: [{ ...owner(), blockOwnerDeletion: true }] },
      });
      expect(blocking.status).toBe(403);
      expect(blocking.body).toMatchObject({
        reason: 'Forbidden',
        message:
          'configmaps "blocking" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can\'t set finalizers on: , <nil>',
      });
      em.seed([
        {
          apiVersion: RBAC,
          kind: 'Role',
          metadata: { name: 'finalize-web', namespace: 'apps' },
          rules: [
            {
              apiGroups: ['apps'],
              resources: ['deployments/finalizers'],
              resourceNames: ['web'],
              verbs: ['update'],
            },
          ],
        },
        {
          apiVersion: RBAC,
          kind: 'RoleBinding',
          metadata: { name: 'builder-finalize-web', namespace: 'apps' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'finalize-web' },
          subjects: [{ kind: 'User', name: 'builder' }],
        },
      ]);
      const allowed = await call(builder, 'POST', '/api/v1/namespaces/apps/configmaps', {
        ...configMap('blocking'),
        metadata: { name: 'blocking', ownerReferences: [{ ...owner(), blockOwnerDeletion: true }] },
      });
      expect(allowed.status).toBe(201);
    });

    it('changing ownerReferences needs delete on the object; unknown owner kinds are refused', async () => {
      em.create(configMap('orphan'));
      const viewer = em.addUser('updater', ['system:authenticated']);
      em.seed([
        {
          apiVersion: RBAC,
          kind: 'ClusterRole',
          metadata: { name: 'cm-updater' },
          rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'patch'] }],
        },
        {
          apiVersion: RBAC,
          kind: 'ClusterRoleBinding',
          metadata: { name: 'updater' },
          roleRef: {
            apiGroup: 'rbac.authorization.k8s.io',
            kind: 'ClusterRole',
            name: 'cm-updater',
          },
          subjects: [{ kind: 'User', name: 'updater' }],
        },
      ]);
      const patchRefs = (token: string, ownerReferences: unknown[]) =>
        call(
          token,
          'PATCH',
          '/api/v1/namespaces/apps/configmaps/orphan',
          { metadata: { ownerReferences } },
          'application/merge-patch+json',
        );
      const refused = await patchRefs(viewer, [owner()]);
      expect(refused.status).toBe(403);
      expect(refused.body.message).toBe(
        'configmaps "orphan" is forbidden: cannot set an ownerRef on a resource you can\'t delete: , <nil>',
      );
      const labelsOnly = await call(
        viewer,
        'PATCH',
        '/api/v1/namespaces/apps/configmaps/orphan',
        { metadata: { labels: { a: 'b' } } },
        'application/merge-patch+json',
      );
      expect(labelsOnly.status).toBe(200);
      const unknown = await patchRefs(builder, [
        {
          apiVersion: 'example.com/v1',
          kind: 'Widget',
          name: 'w',
          uid: 'u-1',
          blockOwnerDeletion: true,
        },
      ]);
      expect(unknown.status).toBe(403);
      expect(unknown.body.message).toContain(
        'cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion example.com/v1 Kind Widget',
      );
    });
  });

  describe('ValidatingAdmissionPolicy', () => {
    it('denies by user (request.userInfo), with the message and status a real server returns', async () => {
      em.seed([
        policy('no-mallory', {
          matchConstraints: rules(['configmaps']),
          validations: [
            {
              expression: "request.userInfo.username != 'mallory'",
              message: 'mallory may not write configuration',
            },
          ],
        }),
        binding('no-mallory', {}),
      ]);
      const denied = await call(
        mallory,
        'POST',
        '/api/v1/namespaces/apps/configmaps',
        configMap('m'),
      );
      expect(denied.status).toBe(422);
      expect(denied.body).toMatchObject({
        kind: 'Status',
        reason: 'Invalid',
        code: 422,
        message:
          "configmaps \"m\" is forbidden: ValidatingAdmissionPolicy 'no-mallory' with binding 'no-mallory' denied request: mallory may not write configuration",
        details: {
          name: 'm',
          kind: 'configmaps',
          causes: [
            {
              message:
                "ValidatingAdmissionPolicy 'no-mallory' with binding 'no-mallory' denied request: mallory may not write configuration",
            },
          ],
        },
      });
      const dry = await call(
        mallory,
        'POST',
        '/api/v1/namespaces/apps/configmaps?dryRun=All',
        configMap('m'),
      );
      expect(dry.status).toBe(422);
      expect(
        (await call(builder, 'POST', '/api/v1/namespaces/apps/configmaps', configMap('b'))).status,
      ).toBe(201);
      em.delete(VAP, 'ValidatingAdmissionPolicyBinding', 'no-mallory');
    });

    it('denies by field, with params, a namespace selector and messageExpression', async () => {
      em.seed([
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'limits', namespace: 'apps' },
          data: { maxReplicas: '3' },
        },
        policy('max-replicas', {
          paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
          matchConstraints: {
            ...rules(['deployments'], ['CREATE', 'UPDATE'], ['apps']),
            namespaceSelector: { matchLabels: { env: 'prod' } },
          },
          validations: [
            {
              expression: 'object.spec.replicas <= int(params.data.maxReplicas)',
              messageExpression:
                "'replicas ' + string(object.spec.replicas) + ' exceed ' + params.data.maxReplicas",
              reason: 'Forbidden',
            },
          ],
        }),
        binding('max-replicas', { paramRef: { name: 'limits', namespace: 'apps' } }),
      ]);
      const big = await call(
        builder,
        'POST',
        '/apis/apps/v1/namespaces/prod/deployments',
        deployment('big', 5),
      );
      expect(big.status).toBe(403);
      expect(big.body.message).toBe(
        "deployments.apps \"big\" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas' denied request: replicas 5 exceed 3",
      );
      expect(
        (
          await call(
            builder,
            'POST',
            '/apis/apps/v1/namespaces/prod/deployments',
            deployment('small', 2),
          )
        ).status,
      ).toBe(201);
      expect(
        (
          await call(
            builder,
            'POST',
            '/apis/apps/v1/namespaces/dev/deployments',
            deployment('big', 5),
          )
        ).status,
      ).toBe(201);
    });

    it('compares object with oldObject on update, and sees deletes', async () => {
      em.seed([
        policy('tier-immutable', {
          matchConstraints: {
            resourceRules: [
              {
                apiGroups: [''],
                apiVersions: ['v1'],
                operations: ['UPDATE', 'DELETE'],
                resources: ['configmaps'],
              },
            ],
            objectSelector: { matchLabels: { locked: 'true' } },
          },
          validations: [
            {
              expression:
                "request.operation == 'UPDATE' && object.data.tier == oldObject.data.tier",
              message: 'tier is immutable and locked objects stay',
            },
          ],
        }),
        binding('tier-immutable', {}),
      ]);
      em.create(configMap('locked', { metadata: { labels: { locked: 'true' } } }));
      const patch = (name: string, tier: string) =>
        call(
          builder,
          'PATCH',
          `/api/v1/namespaces/apps/configmaps/${name}`,
          { data: { tier } },
          'application/merge-patch+json',
        );
      expect((await patch('locked', 'silver')).status).toBe(422);
      expect((await patch('locked', 'gold')).status).toBe(200);
      expect((await patch('b', 'silver')).status).toBe(200);
      const del = await call(builder, 'DELETE', '/api/v1/namespaces/apps/configmaps/locked');
      expect(del.status).toBe(422);
      expect(em.get('v1', 'ConfigMap', 'locked', 'apps')).toBeDefined();
    });

    it('failurePolicy: a broken expression denies with Fail and is skipped with Ignore', async () => {
      const broken = (name: string, failurePolicy: string) =>
        policy(name, {
          failurePolicy,
          matchConstraints: rules(['secrets']),
          validations: [{ expression: "object.data.missing == 'x'" }],
        });
      em.seed([broken('broken-fail', 'Fail'), binding('broken-fail', {})]);
      const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's1' }, data: {} };
      const failed = await call(builder, 'POST', '/api/v1/namespaces/apps/secrets', secret);
      expect(failed.status).toBe(422);
      expect(failed.body.message).toBe(
        "secrets \"s1\" is forbidden: ValidatingAdmissionPolicy 'broken-fail' with binding 'broken-fail' denied request: expression 'object.data.missing == 'x'' resulted in error: no such key: missing",
      );
      em.delete(VAP, 'ValidatingAdmissionPolicyBinding', 'broken-fail');
      em.seed([broken('broken-ignore', 'Ignore'), binding('broken-ignore', {})]);
      expect((await call(builder, 'POST', '/api/v1/namespaces/apps/secrets', secret)).status).toBe(
        201,
      );
    });

    it('validationActions Warn answers with a warning and lets the request through', async () => {
      em.seed([
        policy('warn-only', {
          matchConstraints: rules(['configmaps'], ['CREATE']),
          validations: [{ expression: 'has(object.data.owner)' }],
        }),
        binding('warn-only', { validationActions: ['Warn'] }),
      ]);
      const r = await call(builder, 'POST', '/api/v1/namespaces/apps/configmaps', configMap('w'));
      expect(r.status).toBe(201);
      expect(r.warning).toBe(
        "299 - \"Validation failed for ValidatingAdmissionPolicy 'warn-only' with binding 'warn-only': failed expression: has(object.data.owner)\"",
      );
    });
  });
});
