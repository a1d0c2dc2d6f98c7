import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';

import { kubeletCsrRequest } from '../pkcs10.js';
import { upstreamBinary, upstreamReleases } from '../upstream-binaries.js';
import type { KubeObject } from './index.js';

// What the real kubectl (pinned in test/upstream/versions.json, built from its module by the
// set-up) does against an API server. The same cases run against the emulator
// (kubectl.e2e-spec.ts) and a real kube-apiserver (test/real-kubernetes): where kubectl and the
// emulator disagree, or the emulator and the real server, the emulator is wrong. kubectl runs as
// a child process (asynchronously: the emulator answers from this process's event loop).

/** An API server under test, seen through what the cases need besides kubectl itself. */
export interface KubectlTarget {
  /** An admin's kubeconfig (cluster-admin), with the server's CA. */
  adminKubeconfigYaml(): string;
  /** A kubeconfig for a user with no rights but those of system:authenticated. */
  userKubeconfigYaml(user: string): string;
  get(
    apiVersion: string,
    kind: string,
    name: string,
    namespace?: string,
  ): Promise<KubeObject | undefined>;
  create(...objects: KubeObject[]): Promise<void>;
  patch(
    apiVersion: string,
    kind: string,
    name: string,
    namespace: string | undefined,
    patch: unknown,
    type?: 'merge' | 'json',
  ): Promise<void>;
  patchStatus(apiVersion: string, kind: string, name: string, status: unknown): Promise<void>;
  /** The store's revision, where nothing else writes (the emulator); undefined on a real server. */
  revision?(): string;
  stop(): Promise<void>;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

const NODEPOOL = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: general
spec:
  template:
    spec:
      requirements:
        - key: karpenter.sh/capacity-type
          operator: In
          values: [on-demand]
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
`;

const until = async (check: () => boolean, what: string): Promise<void> => {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};
const untilAsync = async (check: () => Promise<boolean>, what: string): Promise<void> => {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

/** The kubectl cases, against the API server `makeTarget` starts (with the fixture CRDs). */
export function describeKubectlConformance(
  title: string,
  makeTarget: () => Promise<KubectlTarget>,
): void {
  describe(title, () => {
    const kubectlPath = upstreamBinary('kubectl');
    const dir = mkdtempSync(join(tmpdir(), 'kubectl-conformance-'));
    let kubeconfig = '';
    let target: KubectlTarget;

    const start = (args: string[], input?: string, config = kubeconfig) => {
      let resolve!: (r: Run) => void;
      const done = new Promise<Run>((r) => (resolve = r));
      const child = execFile(
        kubectlPath,
        [`--kubeconfig=${config}`, `--cache-dir=${join(dir, 'cache')}`, ...args],
        { timeout: 20_000, env: { PATH: process.env.PATH ?? '', HOME: dir } },
        (err, stdout, stderr) =>
          resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
      child.stdin?.end(input);
      return { child, done };
    };
    const kubectl = (args: string[], input?: string, config?: string): Promise<Run> =>
      start(args, input, config).done;
    const ok = async (args: string[], input?: string): Promise<string> => {
      const r = await kubectl(args, input);
      if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
      return r.stdout;
    };
    const rows = (table: string): string[][] =>
      table
        .trim()
        .split('\n')
        .map((l) => l.trim().split(/\s{2,}/));

    beforeAll(async () => {
      target = await makeTarget();
      kubeconfig = join(dir, 'kubeconfig');
      writeFileSync(kubeconfig, target.adminKubeconfigYaml());
    }, 180_000);
    afterAll(async () => {
      await target?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('is the kubectl pinned in test/upstream/versions.json, built from its module', async () => {
      const r = await kubectl(['version', '--client', '-o', 'json']);
      expect(r.code).toBe(0);
      const { clientVersion } = JSON.parse(r.stdout) as {
        clientVersion: { gitVersion: string; major: string; minor: string; goVersion: string };
      };
      const pinned = upstreamReleases().kubernetes!.version!;
      expect(clientVersion).toMatchObject({
        gitVersion: pinned,
        major: pinned.split('.')[0]!.slice(1),
        minor: pinned.split('.')[1],
      });
    });

    it('connects over TLS, verifying the CA from the kubeconfig, and sends its token', async () => {
      const r = await kubectl(['get', 'namespace', 'kube-system', '-o', 'json']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'kube-system' },
      });
    });

    it('apply --server-side: creates, refuses a conflict, takes it with --force-conflicts', async () => {
      expect(await ok(['apply', '--server-side', '-f', '-'], NODEPOOL)).toBe(
        'nodepool.karpenter.sh/general serverside-applied\n',
      );
      const changed = NODEPOOL.replace('on-demand', 'spot');
      const conflict = await kubectl(
        ['apply', '--server-side', '--field-manager=other', '-f', '-'],
        changed,
      );
      expect(conflict.code).toBe(1);
      expect(conflict.stderr).toContain(
        'error: Apply failed with 1 conflict: conflict with "kubectl": .spec.template.spec.requirements',
      );
      expect(
        await ok(
          ['apply', '--server-side', '--field-manager=other', '--force-conflicts', '-f', '-'],
          changed,
        ),
      ).toBe('nodepool.karpenter.sh/general serverside-applied\n');
      const np = (await target.get('karpenter.sh/v1', 'NodePool', 'general'))!;
      expect(JSON.stringify(np.spec)).toContain('spot');
      expect(np.metadata?.managedFields?.map((m) => m.manager)).toContain('other');
    });

    it('apply --dry-run=server answers without storing', async () => {
      const rv = target.revision?.();
      const out = await ok(
        ['apply', '--server-side', '--dry-run=server', '-o', 'json', '-f', '-'],
        NODEPOOL.replace('general', 'dry'),
      );
      expect(JSON.parse(out)).toMatchObject({ metadata: { name: 'dry', generation: 1 } });
      expect(await target.get('karpenter.sh/v1', 'NodePool', 'dry')).toBeUndefined();
      // The real server's own leases move its revision; the emulator's must stand still.
      if (rv !== undefined) expect(target.revision?.()).toBe(rv);
    });

    it('get prints the server-side Table: built-in printers and CRD printer columns', async () => {
      const ns = rows(await ok(['get', 'namespaces']));
      expect(ns[0]).toEqual(['NAME', 'STATUS', 'AGE']);
      expect(ns).toContainEqual(['kube-system', 'Active', expect.stringMatching(/^\d+s$/)]);
      const pools = rows(await ok(['get', 'nodepools.karpenter.sh']));
      expect(pools[0]).toEqual(['NAME', 'NODECLASS', 'NODES', 'READY', 'AGE']);
      expect(pools[1]?.slice(0, 2)).toEqual(['general', 'default']);
      const wide = rows(await ok(['get', 'nodepools.karpenter.sh', '-o', 'wide']));
      expect(wide[0]).toEqual([
        'NAME',
        'NODECLASS',
        'NODES',
        'READY',
        'AGE',
        'WEIGHT',
        'CPU',
        'MEMORY',
      ]);
    });

    it('-o json and -o yaml for built-in and custom kinds', async () => {
      await ok(['create', 'configmap', 'settings', '--from-literal=mode=fast']);
      const cm = JSON.parse(await ok(['get', 'configmap', 'settings', '-o', 'json'])) as KubeObject;
      expect(cm).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap', data: { mode: 'fast' } });
      const np = parse(
        await ok(['get', 'nodepools.karpenter.sh', 'general', '-o', 'yaml']),
      ) as KubeObject;
      expect(np).toMatchObject({
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        metadata: { name: 'general', generation: 2 },
        spec: { disruption: { budgets: [{ nodes: '10%' }] } },
      });
      const list = JSON.parse(await ok(['get', 'nodepools.karpenter.sh', '-o', 'json'])) as {
        kind: string;
        items: KubeObject[];
      };
      expect(list.kind).toBe('List');
      expect(list.items.map((i) => i.metadata?.name)).toEqual(['general']);
    });

    it('get -w sees an update', async () => {
      const watch = start(['get', 'configmap', 'settings', '-w', '--output-watch-events']);
      let out = '';
      watch.child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
      await until(() => out.includes('ADDED'), 'the initial event');
      await target.patch('v1', 'ConfigMap', 'settings', 'default', {
        data: { mode: 'slow', extra: 'x' },
      });
      await until(() => out.includes('MODIFIED'), 'the update');
      watch.child.kill();
      await watch.done;
      expect(rows(out).map((r) => r.slice(0, 3))).toEqual([
        ['EVENT', 'NAME', 'DATA'],
        ['ADDED', 'settings', '1'],
        ['MODIFIED', 'settings', '2'],
      ]);
    });

    it('wait --for=condition returns once the condition is true', async () => {
      const waiting = kubectl([
        'wait',
        '--for=condition=Ready',
        'nodepools.karpenter.sh/general',
        '--timeout=15s',
      ]);
      await new Promise((r) => setTimeout(r, 300));
      await target.patchStatus('karpenter.sh/v1', 'NodePool', 'general', {
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'Ready',
            message: '',
            lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
          },
        ],
      });
      const r = await waiting;
      expect(r.stderr).toBe('');
      expect(r.stdout).toBe('nodepool.karpenter.sh/general condition met\n');
    });

    it('certificate approve goes through /approval', async () => {
      await target.create({
        apiVersion: 'certificates.k8s.io/v1',
        kind: 'CertificateSigningRequest',
        metadata: { name: 'node-csr-1' },
        spec: {
          request: kubeletCsrRequest('ip-10-0-1-1.ec2.internal', {
            dnsNames: ['ip-10-0-1-1.ec2.internal'],
          }),
          signerName: 'kubernetes.io/kubelet-serving',
          usages: ['digital signature', 'server auth'],
        },
      });
      expect(await ok(['certificate', 'approve', 'node-csr-1'])).toBe(
        'certificatesigningrequest.certificates.k8s.io/node-csr-1 approved\n',
      );
      const csr = (await target.get(
        'certificates.k8s.io/v1',
        'CertificateSigningRequest',
        'node-csr-1',
      ))!;
      expect((csr.status as { conditions: unknown[] }).conditions).toEqual([
        expect.objectContaining({
          type: 'Approved',
          status: 'True',
          reason: 'KubectlApprove',
          lastTransitionTime: expect.stringMatching(/^20\d\d-/),
        }),
      ]);
      const table = rows(await ok(['get', 'csr', 'node-csr-1']));
      expect(table[0]).toEqual([
        'NAME',
        'AGE',
        'SIGNERNAME',
        'REQUESTOR',
        'REQUESTEDDURATION',
        'CONDITION',
      ]);
      // A real kube-controller-manager signs what was approved (Issued); the emulator signs nothing.
      expect(table[1]?.[5]).toMatch(/^Approved(,Issued)?$/);
    });

    it('apply --server-side over a field another client wrote by update names its version', async () => {
      await ok(['create', 'configmap', 'written', '--from-literal=mode=fast']);
      const conflict = await kubectl(
        ['apply', '--server-side', '-f', '-'],
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: written\ndata:\n  mode: slow\n',
      );
      expect(conflict.code).toBe(1);
      expect(conflict.stderr).toContain(
        'error: Apply failed with 1 conflict: conflict with "kubectl-create" using v1: .data.mode',
      );
    });

    it('delete of an object with a finalizer waits until the finalizer is gone', async () => {
      await target.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'held', namespace: 'default', finalizers: ['example.com/hold'] },
      });
      const deleting = kubectl(['delete', 'configmap', 'held', '--timeout=15s']);
      await untilAsync(
        async () =>
          !!(await target.get('v1', 'ConfigMap', 'held', 'default'))?.metadata?.deletionTimestamp,
        'the deletionTimestamp',
      );
      await target.patch(
        'v1',
        'ConfigMap',
        'held',
        'default',
        [{ op: 'remove', path: '/metadata/finalizers' }],
        'json',
      );
      const r = await deleting;
      // kubectl 1.34 names the namespace it deleted from.
      expect(r.stdout).toBe('configmap "held" deleted from default namespace\n');
      expect(r.code).toBe(0);
      expect(await target.get('v1', 'ConfigMap', 'held', 'default')).toBeUndefined();
    });

    it('auth can-i asks SelfSubjectAccessReview, with impersonation', async () => {
      expect(await kubectl(['auth', 'can-i', 'delete', 'nodes'])).toMatchObject({
        code: 0,
        stdout: 'yes\n',
      });
      const bob = await kubectl(['auth', 'can-i', 'list', 'pods', '-n', 'team', '--as=bob']);
      expect(bob).toMatchObject({ code: 1, stdout: 'no\n' });
      await target.create(
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRole',
          metadata: { name: 'pod-reader' },
          rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }],
        },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'RoleBinding',
          metadata: { name: 'bob-view', namespace: 'team' },
          roleRef: {
            apiGroup: 'rbac.authorization.k8s.io',
            kind: 'ClusterRole',
            name: 'pod-reader',
          },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'bob' }],
        },
      );
      expect(
        await kubectl(['auth', 'can-i', 'list', 'pods', '-n', 'team', '--as=bob']),
      ).toMatchObject({ code: 0, stdout: 'yes\n' });
      expect(
        await kubectl(['auth', 'can-i', 'list', 'pods', '-n', 'default', '--as=bob']),
      ).toMatchObject({ code: 1, stdout: 'no\n' });
      const list = rows(await ok(['auth', 'can-i', '--list', '-n', 'team', '--as=bob']));
      expect(list[0]).toEqual(['Resources', 'Non-Resource URLs', 'Resource Names', 'Verbs']);
      expect(list).toContainEqual(['pods', '[]', '[]', '[list]']);
      expect(list).toContainEqual(['[/apis/*]', '[]', '[get]']);
    });

    it('auth whoami posts a SelfSubjectReview (as protobuf) and prints who the server says', async () => {
      const table = rows(await ok(['auth', 'whoami']));
      expect(table[0]).toEqual(['ATTRIBUTE', 'VALUE']);
      expect(table.find((r) => r[0] === 'Groups')?.[1]).toContain('system:masters');
      const bob = join(dir, 'bob-whoami');
      writeFileSync(bob, target.userKubeconfigYaml('bob'));
      const asBob = await kubectl(['auth', 'whoami', '-o', 'json'], undefined, bob);
      expect(asBob.code).toBe(0);
      expect(JSON.parse(asBob.stdout)).toMatchObject({
        kind: 'SelfSubjectReview',
        status: { userInfo: { username: 'bob', groups: ['system:authenticated'] } },
      });
    });

    it('a user without the permission gets the real Forbidden error', async () => {
      const config = join(dir, 'bob');
      writeFileSync(config, target.userKubeconfigYaml('bob'));
      const r = await kubectl(['get', 'pods', '-n', 'default'], undefined, config);
      expect(r.code).toBe(1);
      expect(r.stderr.trim()).toBe(
        'Error from server (Forbidden): pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default"',
      );
      const allowed = await kubectl(['get', 'pods', '-n', 'team'], undefined, config);
      expect(allowed).toMatchObject({ code: 0, stderr: 'No resources found in team namespace.\n' });
    });
  });
}
