import { describe, expect, it } from '@jest/globals';
import { deployDocuments, type ManifestDocument } from '@fleet/testing';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { bootstrapManifest } from '../../apps/api/src/clusters/bootstrap-manifest.js';

/**
 * Issue 17: egress NetworkPolicies. Every Deployment and Job of deploy/ may call out only on the
 * ports its own configuration dials, derived here from the manifests (and the Secret the README
 * tells the installer to create), so a new connection or a changed port fails this test until
 * the policy follows.
 */
interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string } };
}
interface Pod {
  metadata: { labels: Record<string, string> };
  spec: {
    automountServiceAccountToken?: boolean;
    containers: {
      command?: string[];
      env?: EnvVar[];
      envFrom?: { secretRef?: { name: string } }[];
    }[];
  };
}
interface Selector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}
interface Policy {
  metadata: { name: string; namespace?: string };
  spec: {
    podSelector: Selector;
    policyTypes: string[];
    egress?: {
      to?: { namespaceSelector?: Selector }[];
      ports?: { port: number | string; protocol?: string }[];
    }[];
  };
}

const all = deployDocuments();
const DEFAULT_PORTS: Record<string, number> = {
  'postgresql:': 5432,
  'postgres:': 5432,
  'redis:': 6379,
  'rediss:': 6379,
  'https:': 443,
  'http:': 80,
};
const portOf = (url: string): number => {
  const parsed = new URL(url);
  const port = parsed.port ? Number(parsed.port) : DEFAULT_PORTS[parsed.protocol];
  if (!port) throw new Error(`no port for ${url}`);
  return port;
};

/** The variables whose URL a process dials (FLEET_PUBLIC_* are only written into manifests). */
const DIALLED = ['DATABASE_URL', 'REDIS_URL', 'API_URL'];
const DNS = ['UDP/53', 'TCP/53', 'UDP/5353', 'TCP/5353'];
/** What the Kubernetes Service of an API server translates to: the control plane's port. */
const API_SERVER = 'TCP/6443';
/** The cloud's endpoints (EC2, SQS, IAM, STS) are HTTPS. */
const CLOUD = 'TCP/443';

/** The central Secret as deploy/README.md tells the installer to create it. */
const centralSecret = (): Record<string, string> => {
  const readme = readFileSync(new URL('../../deploy/README.md', import.meta.url), 'utf8');
  return Object.fromEntries(
    [...readme.matchAll(/--from-literal=([A-Z_]+)='([^']+)'/g)].map((m) => [m[1]!, m[2]!]),
  );
};

/** The sidecar's Secret as the API writes it into a bootstrap manifest, from api.yaml's values. */
const sidecarSecret = (): Record<string, string> => {
  const api = all
    .flatMap((f) => f.docs)
    .find(
      (d) => d.kind === 'Deployment' && d.metadata?.name === 'karpenter-fleet-api',
    ) as unknown as {
    spec: { template: Pod };
  };
  const env = Object.fromEntries(
    (api.spec.template.spec.containers[0]!.env ?? []).map((e) => [e.name, e.value]),
  );
  const manifest = bootstrapManifest({
    clusterUid: '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b',
    clusterName: 'c',
    reportToken: 'x'.repeat(32),
    apiUrl: env.FLEET_PUBLIC_URL!,
    redisUrl: env.FLEET_PUBLIC_REDIS_URL!,
    queuePrefix: 'bull',
    image: 'sidecar',
    namespace: 'karpenter-fleet',
  });
  const secret = manifest
    .split(/^---$/m)
    .map((d) => parse(d) as ManifestDocument & { stringData?: Record<string, string> })
    .find((d) => d.kind === 'Secret');
  return secret!.stringData!;
};

const selects = (selector: Selector, labels: Record<string, string>) =>
  Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v) &&
  (selector.matchExpressions ?? []).every((e) => {
    if (e.operator === 'In') return e.values!.includes(labels[e.key]!);
    if (e.operator === 'NotIn') return !e.values!.includes(labels[e.key]!);
    if (e.operator === 'Exists') return e.key in labels;
    return !(e.key in labels);
  });

describe('deploy/ egress NetworkPolicies', () => {
  const secrets: Record<string, Record<string, string>> = {
    'karpenter-fleet': centralSecret(),
    'karpenter-fleet-sidecar': sidecarSecret(),
  };

  const workloads = all.flatMap(({ file, docs }) => {
    const dir = file.slice(0, file.lastIndexOf('/'));
    const kustomization = all.find((f) => f.file === `${dir}/kustomization.yaml`)?.docs[0] as
      { namespace?: string; resources?: string[] } | undefined;
    const policies = all
      .filter((f) => f.file.startsWith(`${dir}/`))
      .filter((f) => kustomization?.resources?.includes(f.file.slice(dir.length + 1)))
      .flatMap((f) => f.docs)
      .filter((d) => d.kind === 'NetworkPolicy') as unknown as Policy[];
    return docs
      .filter((d) => d.kind === 'Deployment' || d.kind === 'Job')
      .map((w) => ({
        id: `${file}: ${w.kind}/${w.metadata?.name}`,
        namespace: kustomization?.namespace ?? w.metadata?.namespace,
        pod: (w as unknown as { spec: { template: Pod } }).spec.template,
        policies: policies.filter(
          (p) =>
            (kustomization?.namespace ?? p.metadata.namespace) ===
            (kustomization?.namespace ?? w.metadata?.namespace),
        ),
      }));
  });

  /** What a workload dials, from its own configuration. */
  const required = (pod: Pod): string[] => {
    const needs = new Set(DNS);
    for (const c of pod.spec.containers) {
      const env: Record<string, string | undefined> = {};
      for (const from of c.envFrom ?? []) Object.assign(env, secrets[from.secretRef!.name]);
      for (const e of c.env ?? []) {
        const ref = e.valueFrom?.secretKeyRef;
        env[e.name] = ref ? secrets[ref.name]?.[ref.key] : e.value;
      }
      for (const name of DIALLED) {
        if (!(name in env)) continue;
        expect({ [name]: env[name] }).toEqual({ [name]: expect.any(String) });
        needs.add(`TCP/${portOf(env[name]!)}`);
      }
      // A mounted service-account token or a kubeconfig: the process calls an API server.
      if (env.KUBECONFIG || pod.spec.automountServiceAccountToken !== false) needs.add(API_SERVER);
      // The sidecar's drivers check and read the cloud (EC2, SQS, IAM).
      if (c.command?.some((a) => a.includes('apps/sidecar/'))) needs.add(CLOUD);
    }
    return [...needs].sort();
  };

  it('finds the workloads: API, migration Job, worker, the four sidecars and the hosted guest bootstrap Job', () => {
    expect(workloads.map((w) => w.id.split(': ')[1]).sort()).toEqual([
      'Deployment/karpenter-fleet-api',
      'Deployment/karpenter-fleet-sidecar',
      'Deployment/karpenter-fleet-sidecar',
      'Deployment/karpenter-fleet-sidecar',
      'Deployment/karpenter-fleet-sidecar',
      'Deployment/karpenter-fleet-worker',
      'Job/karpenter-fleet-guest-bootstrap',
      'Job/karpenter-fleet-migrate',
    ]);
  });

  it('every workload is egress-isolated and may call out only on the ports its configuration dials', () => {
    const found: Record<string, string[]> = {};
    const wanted: Record<string, string[]> = {};
    for (const w of workloads) {
      const egress = w.policies.filter(
        (p) =>
          p.spec.policyTypes.includes('Egress') &&
          selects(p.spec.podSelector, w.pod.metadata.labels),
      );
      const allowed = new Set<string>();
      for (const rule of egress.flatMap((p) => p.spec.egress ?? [])) {
        // A rule without ports would open every port.
        expect(rule.ports?.length).toBeGreaterThan(0);
        for (const port of rule.ports!) {
          expect(typeof port.port).toBe('number');
          allowed.add(`${port.protocol ?? 'TCP'}/${port.port}`);
        }
      }
      // No policy at all leaves the pod's egress open: that must show as a difference too.
      found[w.id] = egress.length ? [...allowed].sort() : ['(not isolated)'];
      wanted[w.id] = required(w.pod);
    }
    expect(found).toEqual(wanted);
  });

  it('DNS is open only towards the cluster DNS namespace; the central namespace denies all egress by default', () => {
    for (const w of workloads) {
      for (const rule of w.policies.flatMap((p) => p.spec.egress ?? [])) {
        const ports = (rule.ports ?? []).map((p) => `${p.protocol ?? 'TCP'}/${p.port}`);
        if (!ports.some((p) => DNS.includes(p))) continue;
        expect(ports.every((p) => DNS.includes(p))).toBe(true);
        expect(rule.to).toEqual([
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'openshift-dns' } },
          },
        ]);
      }
    }
    const base = all.filter((f) => f.file.startsWith('base/')).flatMap((f) => f.docs);
    expect(
      (base as unknown as Policy[]).filter(
        (d) =>
          (d as unknown as ManifestDocument).kind === 'NetworkPolicy' &&
          Object.keys(d.spec.podSelector).length === 0 &&
          d.spec.policyTypes.includes('Egress') &&
          !d.spec.egress,
      ),
    ).toHaveLength(1);
  });
});
