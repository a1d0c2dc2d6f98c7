import { describe, expect, it } from '@jest/globals';
import { deployDocuments, type ManifestDocument } from '@fleet/testing';
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
 * What the sidecar does on its cluster, (group, resource, verbs), read from the code:
 * - libs/cloud-provider/src/crds.ts, aws/provider.ts: installs CRDs (server-side apply);
 * - aws/provider.ts ownedKinds + aws/operand.ts: applies and prunes (owned-by label) Namespace,
 *   ServiceAccount, ClusterRole(Binding), Role(Binding), Deployment, PodDisruptionBudget,
 *   CredentialsRequest, the Karpenter CR, NodePools and EC2NodeClasses; writing Karpenter's
 *   roles needs escalate/bind;
 * - libs/discovery/src/cluster-reader.ts: Infrastructure, MachineSets, the user-data Secret;
 * - apps/sidecar/src/cluster-autoscaler: ClusterAutoscaler/MachineAutoscalers read, deleted and
 *   re-created; the backup ConfigMap in openshift-config;
 * - apps/sidecar/src/cluster-operator: the ClusterOperator and its /status (server-side apply);
 * - apps/sidecar/src/csr + kube/cluster-client.ts: CSRs watched, /approval replaced, for the two
 *   kubelet signers; NodeClaims and Nodes watched for the identity check;
 * - apps/sidecar/src/metrics/cluster-metrics.ts: Nodes, NodePools, pending Pods listed;
 * - apps/sidecar/src/runtime.ts: watches on EC2NodeClasses, NodeClaims, CSRs, Karpenter, Deployments,
 *   Karpenter's Nodes and the MachineConfigPools;
 * - libs/cloud-provider/src/openshift/machine-config.ts + nodeclass-controller.ts: per NodeClass a
 *   MachineConfigPool, KubeletConfig and user-data Secret (Role in openshift-machine-api), pruned.
 */
const APPLY = ['get', 'list', 'watch', 'create', 'update', 'patch'];
const OWN = [...APPLY, 'delete'];
const READ = ['get', 'list', 'watch'];
const SIDECAR_NEEDS: [group: string, resource: string, verbs: string[]][] = [
  ['apiextensions.k8s.io', 'customresourcedefinitions', APPLY],
  ['', 'namespaces', OWN],
  ['', 'serviceaccounts', OWN],
  ['rbac.authorization.k8s.io', 'clusterroles', [...OWN, 'escalate', 'bind']],
  ['rbac.authorization.k8s.io', 'clusterrolebindings', OWN],
  ['rbac.authorization.k8s.io', 'roles', [...OWN, 'escalate', 'bind']],
  ['rbac.authorization.k8s.io', 'rolebindings', OWN],
  ['apps', 'deployments', OWN],
  ['policy', 'poddisruptionbudgets', OWN],
  ['', 'secrets', ['get']],
  ['', 'configmaps', OWN],
  ['', 'nodes', READ],
  ['', 'pods', ['list']],
  ['karpenter.sh', 'nodepools', OWN],
  ['karpenter.sh', 'nodeclaims', READ],
  ['karpenter.k8s.aws', 'ec2nodeclasses', OWN],
  ['autoscaling.openshift.io', 'clusterautoscalers', ['get', 'list', 'create', 'delete']],
  ['autoscaling.openshift.io', 'machineautoscalers', ['get', 'list', 'create', 'delete']],
  ['autoscaling.openshift.io', 'karpenters', OWN],
  ['config.openshift.io', 'infrastructures', ['get', 'list']],
  ['config.openshift.io', 'clusteroperators', APPLY],
  ['config.openshift.io', 'clusteroperators/status', ['update', 'patch']],
  ['machine.openshift.io', 'machinesets', ['get', 'list']],
  ['machineconfiguration.openshift.io', 'machineconfigpools', OWN],
  ['machineconfiguration.openshift.io', 'kubeletconfigs', OWN],
  ['cloudcredential.openshift.io', 'credentialsrequests', OWN],
  ['certificates.k8s.io', 'certificatesigningrequests', READ],
  ['certificates.k8s.io', 'certificatesigningrequests/approval', ['update']],
];
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

  it('sets only env vars the app config schemas know', () => {
    const deployments = all.flatMap((f) =>
      f.docs.filter((d) => d.kind === 'Deployment').map((d) => [f.file, d] as const),
    );
    expect(deployments.length).toBe(4);
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

  it('the standalone ClusterRole grants everything the sidecar does, bound to its ServiceAccount', () => {
    const docs = docsUnder('sidecar/standalone');
    const role = docs.find((d) => d.kind === 'ClusterRole') as Doc & { rules: Rule[] };
    const allows = (group: string, resource: string, verb: string) =>
      role.rules.some(
        (r) =>
          !r.resourceNames &&
          r.apiGroups.includes(group) &&
          r.resources.includes(resource) &&
          r.verbs.includes(verb),
      );
    const missing = SIDECAR_NEEDS.flatMap(([group, resource, verbs]) =>
      verbs.filter((v) => !allows(group, resource, v)).map((v) => `${group}/${resource}:${v}`),
    );
    expect(missing).toEqual([]);
    const signers = role.rules.find((r) => r.resources.includes('signers'));
    expect(signers).toMatchObject({ apiGroups: ['certificates.k8s.io'], verbs: ['approve'] });
    expect([...(signers?.resourceNames ?? [])].sort()).toEqual(SIGNERS);
    // Nothing broader than listed: no wildcards.
    for (const r of role.rules) {
      expect([...r.apiGroups, ...r.resources, ...r.verbs]).not.toContain('*');
    }
    const binding = docs.find((d) => d.kind === 'ClusterRoleBinding') as Doc & {
      roleRef: { name: string };
      subjects: { kind: string; name: string; namespace: string }[];
    };
    expect(binding.roleRef.name).toBe(role.metadata?.name);
    expect(binding.subjects).toEqual([
      { kind: 'ServiceAccount', name: 'karpenter-fleet-sidecar', namespace: 'karpenter-fleet' },
    ]);
  });

  it('the hosted sidecar uses a Role, not a ClusterRole, and the mounted guest kubeconfig', () => {
    const docs = docsUnder('sidecar/hosted');
    expect(docs.map((d) => d.kind)).not.toContain('ClusterRole');
    expect(docs.map((d) => d.kind)).toContain('Role');
    const deployment = docs.find((d) => d.kind === 'Deployment')!;
    const container = containersOf(deployment)[0] as Container & {
      env: { name: string; value?: string }[];
      volumeMounts: { name: string; mountPath: string }[];
    };
    const kubeconfig = container.env.find((e) => e.name === 'KUBECONFIG')?.value ?? '';
    const mount = container.volumeMounts.find((m) => kubeconfig.startsWith(`${m.mountPath}/`));
    const volumes = (deployment as { spec: { template: { spec: { volumes: unknown[] } } } }).spec
      .template.spec.volumes;
    expect(volumes).toContainEqual(
      expect.objectContaining({
        name: mount?.name,
        secret: expect.objectContaining({ secretName: expect.stringMatching(/-kubeconfig$/) }),
      }),
    );
  });
});
