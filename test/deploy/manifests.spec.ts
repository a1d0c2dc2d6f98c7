import { describe, expect, it } from '@jest/globals';
import { deployDocuments, imageSidecar, type ManifestDocument } from '@fleet/testing';
import { HCCO_KUBECONFIG_SECRET, HOSTED_GUEST_KUBECONFIG_SECRET } from '@fleet/discovery';
import { existsSync } from 'node:fs';
import { parse } from 'yaml';
import type { z } from 'zod';
import { ApiConfigSchema } from '../../apps/api/src/config.js';
import { bootstrapManifest } from '../../apps/api/src/clusters/bootstrap-manifest.js';
import { SidecarConfigSchema } from '../../apps/sidecar/src/config.js';
import { WorkerConfigSchema } from '../../apps/worker/src/config.js';

type Doc = ManifestDocument;
interface Container {
  name: string;
  env?: { name: string; value?: string }[];
  envFrom?: { secretRef?: { name: string } }[];
}
interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

const all = deployDocuments();
const docsUnder = (prefix: string) =>
  all.filter((f) => f.file.startsWith(prefix)).flatMap((f) => f.docs);

/** Which app's config a Deployment's container is checked against, by Deployment name. */
const SCHEMAS: Record<string, z.ZodObject> = {
  'karpenter-fleet-api': ApiConfigSchema,
  'karpenter-fleet-worker': WorkerConfigSchema,
  'karpenter-fleet-sidecar': SidecarConfigSchema,
};

const containersOf = (doc: Doc): Container[] =>
  (doc as { spec?: { template?: { spec?: { containers?: Container[] } } } }).spec?.template?.spec
    ?.containers ?? [];

/**
 * Writes the sidecar may make cluster-wide without naming the object: kinds whose names the fleet
 * or a user chooses (NodePools, NodeClasses, and each NodeClass's MachineConfigPool and
 * KubeletConfig), creates (a create request carries no name for RBAC) of cluster-scoped objects, and CSR approval (narrowed to two signers by `approve`). Everything
 * else the sidecar writes is pinned by name or granted in one namespace;
 * test/standalone-aws/sidecar-rbac.e2e-spec.ts proves the grants are exactly what it uses.
 */
const UNNAMED_CLUSTER_WRITES = [
  'karpenter.sh/nodepools:create',
  'karpenter.sh/nodepools:patch',
  'karpenter.sh/nodepools:delete',
  'karpenter.k8s.aws/ec2nodeclasses:create',
  'karpenter.k8s.aws/ec2nodeclasses:patch',
  'karpenter.k8s.aws/ec2nodeclasses:delete',
  'autoscaling.openshift.io/clusterautoscalers:create',
  'machineconfiguration.openshift.io/machineconfigpools:create',
  'machineconfiguration.openshift.io/machineconfigpools:patch',
  'machineconfiguration.openshift.io/machineconfigpools:delete',
  'machineconfiguration.openshift.io/kubeletconfigs:create',
  'machineconfiguration.openshift.io/kubeletconfigs:patch',
  'machineconfiguration.openshift.io/kubeletconfigs:delete',
  'certificates.k8s.io/certificatesigningrequests/approval:update',
].sort();
const READS = new Set(['get', 'list', 'watch']);
const SIGNERS = ['kubernetes.io/kube-apiserver-client-kubelet', 'kubernetes.io/kubelet-serving'];

describe('deploy/ manifests', () => {
  it('finds the layout', () => {
    expect(all.map((f) => f.file).sort()).toEqual(
      expect.arrayContaining([
        'base/api.yaml',
        'base/worker.yaml',
        'base/kustomization.yaml',
        'sidecar/standalone/kustomization.yaml',
        'sidecar/hosted/kustomization.yaml',
        'sidecar/capi/kustomization.yaml',
        'sidecar/capi/management-rbac.yaml',
        'sidecar/azure/kustomization.yaml',
      ]),
    );
  });

  it.each(all.map((f) => [f.file, f.docs] as const))(
    '%s: every document has apiVersion, kind and metadata.name',
    (_file, docs) => {
      expect(docs.length).toBeGreaterThan(0);
      for (const doc of docs) {
        expect(doc).toMatchObject({
          apiVersion: expect.any(String),
          kind: expect.any(String),
          metadata: { name: expect.stringMatching(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/) },
        });
      }
    },
  );

  it('every sidecar Deployment runs what the image runs: the bundle, with the image’s process settings', () => {
    const image = imageSidecar();
    expect(image.args).toEqual(['--optimize-for-size', 'dist/apps/sidecar/main.mjs']);
    expect(image.env.NODE_OPTIONS).toBe('--max-semi-space-size=1');
    expect(Object.keys(image.env).sort()).toEqual([
      'MALLOC_ARENA_MAX',
      'MALLOC_TOP_PAD_',
      'MALLOC_TRIM_THRESHOLD_',
      'NODE_ENV',
      'NODE_OPTIONS',
    ]);
    const sidecars = all.flatMap((f) =>
      f.docs
        .filter((d) => d.kind === 'Deployment' && d.metadata?.name === 'karpenter-fleet-sidecar')
        .map((d) => [f.file, d] as const),
    );
    expect(sidecars.length).toBe(4);
    for (const [file, deployment] of sidecars) {
      const [container] = containersOf(deployment) as (Container & { command?: string[] })[];
      expect({ file, command: container?.command }).toEqual({
        file,
        command: ['node', ...image.args],
      });
    }
    // The build writes it (scripts/bundle-sidecar.mjs); the image copies dist/apps.
    expect(existsSync('dist/apps/sidecar/main.mjs')).toBe(true);
  });

  it('sets only env vars the app config schemas know', () => {
    const deployments = all.flatMap((f) =>
      f.docs.filter((d) => d.kind === 'Deployment').map((d) => [f.file, d] as const),
    );
    expect(deployments.length).toBe(6);
    for (const [file, deployment] of deployments) {
      const schema = SCHEMAS[deployment.metadata?.name ?? ''];
      if (!schema) throw new Error(`${file}: no config schema for ${deployment.metadata?.name}`);
      const known = Object.keys(schema.shape);
      for (const container of containersOf(deployment)) {
        const unknown = (container.env ?? []).map((e) => e.name).filter((n) => !known.includes(n));
        expect({ file, unknown }).toEqual({ file, unknown: [] });
      }
    }
  });

  it('serves probes where the apps listen: API_PORT on 0.0.0.0, OPS_PORT 9464 otherwise', () => {
    for (const deployment of all.flatMap((f) => f.docs).filter((d) => d.kind === 'Deployment')) {
      const [container] = containersOf(deployment) as (Container & {
        env: { name: string; value?: string }[];
        readinessProbe: { httpGet: { path: string } };
        livenessProbe: { httpGet: { path: string } };
      })[];
      const env = Object.fromEntries(container!.env.map((e) => [e.name, e.value]));
      if (deployment.metadata?.name === 'karpenter-fleet-api') {
        expect(env).toMatchObject({ API_PORT: '4000', API_HOST: '0.0.0.0' });
      } else {
        expect(env).toMatchObject({ OPS_PORT: '9464', OPS_HOST: '0.0.0.0' });
      }
      expect(container!.readinessProbe.httpGet.path).toBe('/readyz');
      expect(container!.livenessProbe.httpGet.path).toBe('/healthz');
    }
  });

  it('the sidecar Secret keys from bootstrap manifests are sidecar config too', () => {
    const manifest = bootstrapManifest({
      clusterUid: '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b',
      clusterName: 'c',
      reportToken: 'x'.repeat(32),
      apiUrl: 'https://fleet.example.com',
      redisUrl: 'redis://u:p@redis:6379',
      queuePrefix: 'bull',
      image: 'sidecar',
      namespace: 'karpenter-fleet',
    });
    const secret = manifest
      .split(/^---$/m)
      .map((d) => parse(d) as Doc & { stringData?: Record<string, string> })
      .find((d) => d.kind === 'Secret');
    const known = Object.keys(SidecarConfigSchema.shape);
    expect(Object.keys(secret!.stringData!).filter((k) => !known.includes(k))).toEqual([]);
    // The standalone Deployment reads the Secret the bootstrap manifest creates.
    const standalone = docsUnder('sidecar/standalone').find((d) => d.kind === 'Deployment')!;
    expect(containersOf(standalone)[0]!.envFrom).toEqual([
      { secretRef: { name: secret!.metadata!.name } },
    ]);
  });

  it('a hosted cluster’s bootstrap manifest runs the sidecar as deploy/sidecar/hosted does: the guest kubeconfig mounted, the HCP namespace from the pod, no Namespace of its own', () => {
    const docs = bootstrapManifest({
      clusterUid: '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b',
      clusterName: 'guest-1',
      reportToken: 'x'.repeat(32),
      apiUrl: 'https://fleet.example.com',
      redisUrl: 'redis://u:p@redis:6379',
      queuePrefix: 'bull',
      image: 'sidecar',
      namespace: 'clusters-guest-1',
      hosted: true,
    })
      .split(/^---$/m)
      .map((d) => parse(d) as Doc);
    // The HCP namespace is HyperShift's: the manifest must not claim it.
    expect(docs.map((d) => d.kind)).toEqual(['Secret', 'ServiceAccount', 'Deployment']);
    type PodSpec = {
      containers: (Container & {
        env?: { name: string; value?: string; valueFrom?: unknown }[];
        volumeMounts?: { name: string; mountPath: string }[];
      })[];
      volumes?: { name: string; secret?: { secretName: string } }[];
    };
    const podOf = (d: Doc) =>
      (d as unknown as { spec: { template: { spec: PodSpec } } }).spec.template.spec;
    const bootstrap = podOf(docs.find((d) => d.kind === 'Deployment')!);
    const shipped = podOf(docsUnder('sidecar/hosted').find((d) => d.kind === 'Deployment')!);
    const envOf = (pod: PodSpec, name: string) =>
      pod.containers[0]!.env?.find((e) => e.name === name);
    for (const name of ['WORKLOAD_KUBECONFIG', 'SIDECAR_NAMESPACE', 'HOSTED_MODE'])
      expect([name, envOf(bootstrap, name)]).toEqual([name, envOf(shipped, name)]);
    const guest = (pod: PodSpec) =>
      pod.volumes?.find((v) => v.secret?.secretName === HOSTED_GUEST_KUBECONFIG_SECRET);
    expect(guest(bootstrap)).toBeDefined();
    expect(guest(bootstrap)).toEqual(guest(shipped));
    expect(JSON.stringify(bootstrap)).not.toContain(HCCO_KUBECONFIG_SECRET);
    expect(bootstrap.containers[0]!.volumeMounts).toEqual(shipped.containers[0]!.volumeMounts);
    // What the sidecar reads is sidecar config.
    const known = Object.keys(SidecarConfigSchema.shape);
    expect(
      (bootstrap.containers[0]!.env ?? []).map((e) => e.name).filter((n) => !known.includes(n)),
    ).toEqual([]);
  });

  it.each([
    ['sidecar/standalone', 'karpenter.k8s.aws/ec2nodeclasses'],
    ['sidecar/azure', 'karpenter.azure.com/aksnodeclasses'],
  ])(
    '%s RBAC is least privilege: names pinned, namespaced rights in Roles, no wildcards',
    (dir, nodeClasses) => {
      const docs = docsUnder(dir);
      const roles = docs.filter((d) => d.kind === 'ClusterRole' || d.kind === 'Role') as (Doc & {
        rules: Rule[];
      })[];
      const role = roles.find(
        (d) => d.kind === 'ClusterRole' && d.metadata?.name === 'karpenter-fleet-sidecar',
      )!;
      for (const r of roles.flatMap((x) => x.rules)) {
        expect([...r.apiGroups, ...r.resources, ...r.verbs]).not.toContain('*');
        // Escalation rights only ever for named roles.
        if (r.verbs.some((v) => v === 'escalate' || v === 'bind'))
          expect(r.resourceNames?.length).toBeGreaterThan(0);
      }
      // Secrets: only in a Role; read only by name. The one unnamed grant is writing (never reading)
      // the per-NodeClass user-data Secrets beside worker-user-data, whose names follow the
      // NodeClasses (docs/DOMAIN-PARITY.md records this as a gap to close).
      for (const x of roles)
        for (const r of x.rules.filter((r) => r.resources.includes('secrets'))) {
          expect(x.kind).toBe('Role');
          if (r.resourceNames?.length) continue;
          expect(x.metadata?.namespace).toBe('openshift-machine-api');
          expect(r.verbs.filter((v) => READS.has(v))).toEqual([]);
        }
      const unnamedWrites = role.rules
        .filter((r) => !r.resourceNames)
        .flatMap((r) =>
          r.verbs
            .filter((v) => !READS.has(v))
            .flatMap((v) =>
              r.resources.flatMap((res) => r.apiGroups.map((g) => `${g}/${res}:${v}`)),
            ),
        )
        .sort();
      expect(unnamedWrites).toEqual(
        UNNAMED_CLUSTER_WRITES.map((w) =>
          w.replace('karpenter.k8s.aws/ec2nodeclasses', nodeClasses),
        ).sort(),
      );
      const signers = role.rules.find((r) => r.resources.includes('signers'));
      expect(signers).toMatchObject({ apiGroups: ['certificates.k8s.io'], verbs: ['approve'] });
      expect([...(signers?.resourceNames ?? [])].sort()).toEqual(SIGNERS);
      // Every binding is to the sidecar's ServiceAccount, and to a role of this file.
      const bindings = docs.filter(
        (d) => d.kind === 'ClusterRoleBinding' || d.kind === 'RoleBinding',
      ) as (Doc & {
        roleRef: { kind: string; name: string };
        subjects: { kind: string; name: string; namespace: string }[];
      })[];
      expect(bindings.length).toBeGreaterThan(1);
      for (const b of bindings) {
        expect(
          roles.some(
            (r) =>
              r.kind === b.roleRef.kind &&
              r.metadata?.name === b.roleRef.name &&
              r.metadata?.namespace === b.metadata?.namespace,
          ),
        ).toBe(true);
        expect(b.subjects).toEqual([
          { kind: 'ServiceAccount', name: 'karpenter-fleet-sidecar', namespace: 'karpenter-fleet' },
        ]);
      }
      // The operand-namespace ClusterRole is bound by the sidecar itself, never here.
      expect(bindings.map((b) => b.roleRef.name)).not.toContain('karpenter-fleet-sidecar-operand');
    },
  );

  it('the Azure sidecar reads the worker credentials Secret by name only, writes no EC2NodeClass or Karpenter CR, and only its own ClusterOperator', () => {
    const docs = docsUnder('sidecar/azure');
    const rules = (
      docs.filter((d) => d.kind === 'ClusterRole' || d.kind === 'Role') as (Doc & {
        rules: Rule[];
      })[]
    ).flatMap((r) => r.rules);
    const secretReads = rules.filter(
      (r) => r.resources.includes('secrets') && r.verbs.some((v) => READS.has(v)),
    );
    expect(secretReads).toEqual([
      {
        apiGroups: [''],
        resources: ['secrets'],
        resourceNames: ['worker-user-data', 'azure-cloud-credentials'],
        verbs: ['get'],
      },
    ]);
    const groups = rules.flatMap((r) => r.apiGroups);
    expect(groups).not.toContain('karpenter.k8s.aws');
    expect(rules.flatMap((r) => r.resources)).not.toContain('karpenters');
    expect(rules.filter((r) => r.resources.some((x) => x.startsWith('clusteroperators')))).toEqual([
      expect.objectContaining({ resources: ['clusteroperators'], resourceNames: ['karpenter'] }),
      expect.objectContaining({
        resources: ['clusteroperators/status'],
        resourceNames: ['karpenter'],
      }),
    ]);
    // The operand image and the sidecar's own Azure identity come from the cluster's Secrets.
    const deployment = docs.find((d) => d.kind === 'Deployment')!;
    expect(containersOf(deployment)[0]!.envFrom).toEqual([
      { secretRef: { name: 'karpenter-fleet-sidecar' } },
      { secretRef: { name: 'karpenter-fleet-sidecar-azure' } },
    ]);
  });

  it('the hosted sidecar uses a Role, not a ClusterRole, and its own guest kubeconfig, never HyperShift’s admin one', () => {
    const docs = docsUnder('sidecar/hosted');
    expect(docs.map((d) => d.kind)).not.toContain('ClusterRole');
    expect(docs.map((d) => d.kind)).toContain('Role');
    const deployment = docs.find((d) => d.kind === 'Deployment')!;
    const container = containersOf(deployment)[0] as Container & {
      env: { name: string; value?: string }[];
      volumeMounts: { name: string; mountPath: string }[];
    };
    // The management cluster is the pod's own; the guest is reached as the sidecar's own guest
    // service account, whose kubeconfig the guest bootstrap Job writes.
    expect(container.env.map((e) => e.name)).not.toContain('KUBECONFIG');
    const kubeconfig = container.env.find((e) => e.name === 'WORKLOAD_KUBECONFIG')?.value ?? '';
    const mount = container.volumeMounts.find((m) => kubeconfig.startsWith(`${m.mountPath}/`));
    const volumes = (deployment as { spec: { template: { spec: { volumes: unknown[] } } } }).spec
      .template.spec.volumes;
    expect(volumes).toContainEqual(
      expect.objectContaining({
        name: mount?.name,
        secret: expect.objectContaining({ secretName: HOSTED_GUEST_KUBECONFIG_SECRET }),
      }),
    );
    // Only the one-shot bootstrap Job mounts HyperShift's admin guest kubeconfig, and all it may
    // do on the management cluster is patch the sidecar's guest kubeconfig Secret.
    const mountsAdmin = docs.filter((d) =>
      JSON.stringify(d).includes(`"${HCCO_KUBECONFIG_SECRET}"`),
    );
    expect(mountsAdmin.map((d) => `${d.kind}/${d.metadata?.name}`)).toEqual([
      'Job/karpenter-fleet-guest-bootstrap',
    ]);
    const bootstrapRules = docs
      .filter((d) => d.kind === 'Role' && d.metadata?.name === 'karpenter-fleet-guest-bootstrap')
      .flatMap((d) => (d as unknown as { rules: unknown[] }).rules);
    expect(bootstrapRules).toEqual([
      {
        apiGroups: [''],
        resources: ['secrets'],
        resourceNames: [HOSTED_GUEST_KUBECONFIG_SECRET],
        verbs: ['patch'],
      },
    ]);
    // The HostedCluster is reached by name only: get and patch, no list, watch or delete.
    const roles = docs.filter((d) => d.kind === 'Role') as unknown as {
      metadata: { namespace: string };
      rules: { resources: string[]; resourceNames?: string[]; verbs: string[] }[];
    }[];
    const hostedClusterRules = roles
      .flatMap((r) => r.rules)
      .filter((r) => r.resources.includes('hostedclusters'));
    expect(hostedClusterRules).toEqual([
      expect.objectContaining({ resourceNames: ['example'], verbs: ['get', 'patch'] }),
    ]);
  });

  it('a Cluster API cluster’s bootstrap manifest runs the sidecar as deploy/sidecar/capi does: the management kubeconfig Secret mounted where MANAGEMENT_KUBECONFIG points, the Cluster named from the Secret', () => {
    const docs = bootstrapManifest({
      clusterUid: '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b',
      clusterName: 'capi-east',
      reportToken: 'x'.repeat(32),
      apiUrl: 'https://fleet.example.com',
      redisUrl: 'redis://u:p@redis:6379',
      queuePrefix: 'bull',
      image: 'sidecar',
      namespace: 'karpenter-fleet',
      clusterApi: { name: 'capi-east', namespace: 'capi-east', separateManagementCluster: true },
    })
      .split(/^---$/m)
      .map((d) => parse(d) as Doc & { stringData?: Record<string, string> });
    interface SecretKeyRef {
      name: string;
      key: string;
      optional?: boolean;
    }
    interface PodSpec {
      serviceAccountName: string;
      containers: {
        envFrom?: { secretRef?: { name: string } }[];
        env?: { name: string; valueFrom?: { secretKeyRef?: SecretKeyRef } }[];
        volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
      }[];
      volumes?: { name: string; secret?: { secretName: string } }[];
    }
    const podOf = (d: Doc) =>
      (d as unknown as { spec: { template: { spec: PodSpec } } }).spec.template.spec;
    const secret = docs.find((d) => d.kind === 'Secret')!;
    const bootstrap = podOf(docs.find((d) => d.kind === 'Deployment')!);
    const shippedDeployment = docsUnder('sidecar/capi').find((d) => d.kind === 'Deployment')!;
    const shipped = podOf(shippedDeployment);
    expect(shippedDeployment.metadata).toMatchObject({
      name: docs.find((d) => d.kind === 'Deployment')!.metadata!.name,
      namespace: secret.metadata!.namespace,
    });
    expect(shipped.serviceAccountName).toBe(bootstrap.serviceAccountName);
    expect(shipped.containers[0]!.envFrom).toEqual(bootstrap.containers[0]!.envFrom);
    // Every key the shipped Deployment reads from the Secret, the bootstrap Secret has (the
    // optional MANAGEMENT_KUBECONFIG too, the management cluster being separate here).
    const refs = (shipped.containers[0]!.env ?? []).flatMap((e): SecretKeyRef[] =>
      e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef] : [],
    );
    expect(refs.map((r) => r.key).sort()).toEqual([
      'CLUSTER_API_CLUSTER_NAME',
      'CLUSTER_API_NAMESPACE',
      'MANAGEMENT_KUBECONFIG',
    ]);
    for (const ref of refs) {
      expect(ref.name).toBe(secret.metadata!.name);
      expect(Object.keys(secret.stringData!)).toContain(ref.key);
    }
    // The same Secret mounted at the same place, and MANAGEMENT_KUBECONFIG a file under it.
    const management = (pod: PodSpec) => {
      const volume = pod.volumes?.find(
        (v) => v.secret?.secretName === 'karpenter-fleet-management-kubeconfig',
      );
      const mount = pod.containers[0]!.volumeMounts?.find((m) => m.name === volume?.name);
      return { secretName: volume?.secret?.secretName, mountPath: mount?.mountPath };
    };
    expect(management(shipped)).toEqual(management(bootstrap));
    expect(management(shipped).mountPath).toBeDefined();
    expect(secret.stringData!.MANAGEMENT_KUBECONFIG).toBe(
      `${management(shipped).mountPath}/kubeconfig`,
    );
  });

  it('the Cluster API RBAC is least privilege: no wildcards, names pinned on the workload, on the management cluster everything namespaced in the Cluster’s namespace and cluster-wide only the operand’s RBAC by name', () => {
    const workload = docsUnder('sidecar/capi/rbac.yaml');
    const management = docsUnder('sidecar/capi/management-rbac.yaml');
    const rolesOf = (docs: Doc[]) =>
      docs.filter((d) => d.kind === 'ClusterRole' || d.kind === 'Role') as (Doc & {
        rules: Rule[];
      })[];
    for (const r of [...rolesOf(workload), ...rolesOf(management)].flatMap((x) => x.rules)) {
      expect([...r.apiGroups, ...r.resources, ...r.verbs]).not.toContain('*');
      if (r.verbs.some((v) => v === 'escalate' || v === 'bind'))
        expect(r.resourceNames?.length).toBeGreaterThan(0);
    }
    // Workload: unnamed writes cluster-wide only where names are the users' (NodePools) or
    // Karpenter's (NodeClaims, deleted when the Cluster is), and CSR approval (narrowed to the
    // two kubelet signers); Secrets only in the operand's namespace.
    const role = rolesOf(workload).find(
      (d) => d.kind === 'ClusterRole' && d.metadata?.name === 'karpenter-fleet-sidecar',
    )!;
    expect(
      role.rules
        .filter((r) => !r.resourceNames)
        .flatMap((r) =>
          r.verbs
            .filter((v) => !READS.has(v))
            .flatMap((v) =>
              r.resources.flatMap((res) => r.apiGroups.map((g) => `${g}/${res}:${v}`)),
            ),
        )
        .sort(),
    ).toEqual([
      'certificates.k8s.io/certificatesigningrequests/approval:update',
      'karpenter.sh/nodeclaims:delete',
      'karpenter.sh/nodepools:create',
      'karpenter.sh/nodepools:delete',
      'karpenter.sh/nodepools:patch',
    ]);
    expect(
      [...(role.rules.find((r) => r.resources.includes('signers'))?.resourceNames ?? [])].sort(),
    ).toEqual(SIGNERS);
    for (const x of rolesOf(workload))
      if (x.rules.some((r) => r.resources.includes('secrets')))
        expect(x.metadata?.name).toBe('karpenter-fleet-sidecar-operand');
    // Management: every Role in the namespace of the ServiceAccount (the Cluster's); the
    // ClusterRole only lists and watches RBAC (pruning, drift) and writes the operand's role and
    // binding by name; no Secret.
    const sa = management.find((d) => d.kind === 'ServiceAccount')!;
    for (const d of management.filter((d) => d.kind === 'Role' || d.kind === 'RoleBinding'))
      expect(d.metadata?.namespace).toBe(sa.metadata?.namespace);
    const clusterRules = rolesOf(management)
      .filter((d) => d.kind === 'ClusterRole')
      .flatMap((d) => d.rules);
    for (const r of clusterRules) {
      expect(r.apiGroups).toEqual(['rbac.authorization.k8s.io']);
      if (!r.resourceNames) expect(r.verbs).toEqual(['list', 'watch']);
    }
    expect(
      rolesOf(management)
        .flatMap((d) => d.rules)
        .filter((r) => r.resources.includes('secrets')),
    ).toEqual([]);
    // Every binding on either side is to the sidecar's own ServiceAccount there.
    for (const [docs, subject] of [
      [workload, { name: 'karpenter-fleet-sidecar', namespace: 'karpenter-fleet' }],
      [management, { name: sa.metadata!.name!, namespace: sa.metadata!.namespace! }],
    ] as const)
      for (const b of docs.filter(
        (d) => d.kind === 'ClusterRoleBinding' || d.kind === 'RoleBinding',
      ) as (Doc & { subjects: unknown[] })[])
        expect(b.subjects).toEqual([{ kind: 'ServiceAccount', ...subject }]);
  });

  it('every container, the migration Job and the bootstrap manifest included, has a read-only root filesystem and the runtime seccomp profile (issue 17, point 13)', () => {
    const bootstrap = bootstrapManifest({
      clusterUid: '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b',
      clusterName: 'c',
      reportToken: 'x'.repeat(32),
      apiUrl: 'https://fleet.example.com',
      redisUrl: 'redis://u:p@redis:6379',
      queuePrefix: 'bull',
      image: 'sidecar',
      namespace: 'karpenter-fleet',
    })
      .split(/^---$/m)
      .map((d) => parse(d) as Doc);
    interface PodSpec {
      securityContext?: { seccompProfile?: { type?: string } };
      containers?: (Container & {
        securityContext?: {
          readOnlyRootFilesystem?: boolean;
          allowPrivilegeEscalation?: boolean;
          seccompProfile?: { type?: string };
        };
      })[];
    }
    const workloads = [...all.flatMap((f) => f.docs), ...bootstrap].filter(
      (d) => (d as { spec?: { template?: unknown } }).spec?.template,
    );
    expect(workloads.map((w) => `${w.kind}/${w.metadata?.name}`).sort()).toEqual(
      expect.arrayContaining(['Job/karpenter-fleet-migrate', 'Deployment/karpenter-fleet-sidecar']),
    );
    const weak = workloads.flatMap((w) => {
      const pod = (w as { spec: { template: { spec: PodSpec } } }).spec.template.spec;
      return (pod.containers ?? []).flatMap((c) => {
        const seccomp =
          c.securityContext?.seccompProfile?.type ?? pod.securityContext?.seccompProfile?.type;
        const problems = [
          c.securityContext?.readOnlyRootFilesystem === true ? null : 'readOnlyRootFilesystem',
          c.securityContext?.allowPrivilegeEscalation === false ? null : 'allowPrivilegeEscalation',
          seccomp === 'RuntimeDefault' ? null : 'seccompProfile',
        ].filter(Boolean);
        return problems.length
          ? [`${w.kind}/${w.metadata?.name}/${c.name}: ${problems.join(', ')}`]
          : [];
      });
    });
    expect(weak).toEqual([]);
  });

  it('a NetworkPolicy admits traffic to each workload only on its own named ports; only the API is open to all (issue 17, point 13)', () => {
    interface Policy {
      metadata: { name: string; namespace?: string };
      spec: {
        podSelector: { matchLabels?: Record<string, string> };
        policyTypes: string[];
        ingress?: { from?: unknown[]; ports?: { port: string | number }[] }[];
      };
    }
    interface Pod {
      metadata: { labels: Record<string, string> };
      spec: { containers: { ports?: { name?: string }[] }[] };
    }
    const unguarded: string[] = [];
    for (const { file, docs } of all) {
      if (!file.endsWith('.yaml') || file.endsWith('kustomization.yaml')) continue;
      const dir = file.slice(0, file.lastIndexOf('/'));
      const kustomization = all.find((f) => f.file === `${dir}/kustomization.yaml`)?.docs[0] as
        { namespace?: string; resources?: string[] } | undefined;
      const policies = all
        .filter((f) => f.file.startsWith(`${dir}/`))
        .flatMap((f) => f.docs)
        .filter((d) => d.kind === 'NetworkPolicy') as unknown as Policy[];
      for (const policy of policies) {
        expect(kustomization?.resources).toContain(
          all.find((f) => f.docs.includes(policy as unknown as Doc))!.file.slice(dir.length + 1),
        );
      }
      for (const w of docs.filter((d) => d.kind === 'Deployment' || d.kind === 'Job')) {
        const namespace = kustomization?.namespace ?? w.metadata?.namespace;
        const pod = (w as unknown as { spec: { template: Pod } }).spec.template;
        const ports = pod.spec.containers.flatMap((c) => (c.ports ?? []).map((p) => p.name));
        const selecting = policies.filter(
          (p) =>
            (kustomization?.namespace ?? p.metadata.namespace) === namespace &&
            p.spec.policyTypes.includes('Ingress') &&
            Object.entries(p.spec.podSelector.matchLabels ?? {}).every(
              ([k, v]) => pod.metadata.labels[k] === v,
            ),
        );
        if (!selecting.length) unguarded.push(`${file}: ${w.kind}/${w.metadata?.name}`);
        for (const rule of selecting.flatMap((p) => p.spec.ingress ?? [])) {
          for (const port of rule.ports ?? []) expect(ports).toContain(port.port);
          // Open to every source: only the API's own port.
          if (!rule.from) expect(w.metadata?.name).toBe('karpenter-fleet-api');
        }
      }
    }
    expect(unguarded).toEqual([]);
  });
});
