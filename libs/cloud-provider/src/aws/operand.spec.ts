import { describe, expect, it } from '@jest/globals';
import type { V1Deployment } from '@kubernetes/client-node';
import {
  CREDENTIALS_REQUEST_CRD_PATH,
  desiredState,
  fixtureInfrastructure,
  loadCrdValidator,
} from '@fleet/testing';
import type { KubeObject } from '../types.js';
import { DEFAULT_KARPENTER_IMAGE } from './constants.js';
import { renderAwsOperand, renderFeatureGates } from './operand.js';
import { KARPENTER_CR_CRD_PATH } from './provider.js';

const infra = fixtureInfrastructure();
const render = (desired = desiredState(), image = DEFAULT_KARPENTER_IMAGE) =>
  renderAwsOperand(infra, desired, { image });
const find = (objects: KubeObject[], kind: string, namespace?: string): KubeObject => {
  const found = objects.find(
    (o) => o.kind === kind && (namespace === undefined || o.metadata.namespace === namespace),
  );
  if (!found) throw new Error(`no ${kind}`);
  return found;
};
const deploymentOf = (objects: KubeObject[]) =>
  find(objects, 'Deployment') as unknown as Required<V1Deployment>;
const containerOf = (objects: KubeObject[]) => {
  const container = deploymentOf(objects).spec.template.spec?.containers[0];
  if (!container) throw new Error('no container');
  return container;
};

describe('operand', () => {
  describe('behind the cluster-wide Proxy', () => {
    const proxied = (proxy: NonNullable<typeof infra.proxy>) =>
      renderAwsOperand({ ...infra, proxy }, desiredState(), { image: DEFAULT_KARPENTER_IMAGE });
    const envOf = (objects: KubeObject[]) =>
      (containerOf(objects).env ?? []).filter((e) => /PROXY|AWS_CA_BUNDLE/.test(e.name));

    it('sets only the proxy variables the Proxy has, and no CA bundle without a trusted CA', () => {
      const objects = proxied({ httpsProxy: 'http://p:3128', noProxy: '.svc,169.254.169.254' });
      expect(envOf(objects)).toEqual([
        { name: 'HTTPS_PROXY', value: 'http://p:3128' },
        { name: 'NO_PROXY', value: '.svc,169.254.169.254' },
      ]);
      expect(objects.some((o) => o.kind === 'ConfigMap')).toBe(false);
      expect(deploymentOf(objects).spec.template.spec?.volumes?.map((v) => v.name)).not.toContain(
        'trusted-ca-bundle',
      );
    });

    it('with a trusted CA: the injected bundle, before the Deployment that mounts it', () => {
      const objects = proxied({ httpProxy: 'http://p:3128', trustedCA: 'user-ca-bundle' });
      expect(envOf(objects)).toEqual([
        { name: 'HTTP_PROXY', value: 'http://p:3128' },
        {
          name: 'AWS_CA_BUNDLE',
          value: '/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem',
        },
      ]);
      const kinds = objects.map((o) => o.kind);
      expect(kinds.indexOf('ConfigMap')).toBeLessThan(kinds.indexOf('Deployment'));
      const bundle = find(objects, 'ConfigMap');
      expect(bundle.metadata).toMatchObject({
        name: 'trusted-ca-bundle',
        namespace: 'openshift-karpenter',
        labels: { 'config.openshift.io/inject-trusted-cabundle': 'true' },
      });
      // The Cluster Network Operator owns the data; the fleet never sets it.
      expect(bundle).not.toHaveProperty('data');
    });

    it('renders exactly as before for a cluster without a proxy', () => {
      expect(envOf(render())).toEqual([]);
    });
  });

  describe('on a Cloud Credential Operator Manual/STS cluster', () => {
    const ROLE = 'arn:aws:iam::111122223333:role/prod-east-karpenter';
    const sts = { ...infra, cloudCredentials: { mode: 'ManualSTS' as const } };
    const objects = renderAwsOperand(sts, desiredState({ webIdentityRoleArn: ROLE }), {
      image: DEFAULT_KARPENTER_IMAGE,
    });

    it('writes no CredentialsRequest', () => {
      expect(objects.map((o) => o.kind)).not.toContain('CredentialsRequest');
    });

    it('assumes the role with the projected service-account token, mounts no Secret', () => {
      const container = containerOf(objects);
      const env = Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value]));
      expect(env).toMatchObject({
        AWS_ROLE_ARN: ROLE,
        AWS_WEB_IDENTITY_TOKEN_FILE: '/var/run/secrets/openshift/serviceaccount/token',
        AWS_STS_REGIONAL_ENDPOINTS: 'regional',
      });
      expect(env).not.toHaveProperty('AWS_SHARED_CREDENTIALS_FILE');
      const pod = deploymentOf(objects).spec.template.spec!;
      expect(pod.volumes!.map((v) => v.name)).toEqual(['bound-sa-token']);
      expect(pod.volumes![0]!.projected!.sources![0]!.serviceAccountToken).toMatchObject({
        audience: 'openshift',
        path: 'token',
      });
      expect(container.volumeMounts).toEqual([
        {
          name: 'bound-sa-token',
          mountPath: '/var/run/secrets/openshift/serviceaccount',
          readOnly: true,
        },
      ]);
    });

    it('plain Manual mode (no issuer) keeps the CredentialsRequest and its Secret', () => {
      const manual = renderAwsOperand(
        { ...infra, cloudCredentials: { mode: 'Manual' } },
        desiredState({ webIdentityRoleArn: ROLE }),
        { image: DEFAULT_KARPENTER_IMAGE },
      );
      expect(manual.map((o) => o.kind)).toContain('CredentialsRequest');
      expect((containerOf(manual).env ?? []).map((e) => e.name)).not.toContain('AWS_ROLE_ARN');
    });
  });

  it('renders the objects in apply order', () => {
    expect(
      render().map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`),
    ).toEqual([
      'Namespace//openshift-karpenter',
      'ServiceAccount/openshift-karpenter/karpenter',
      'ClusterRole//openshift-karpenter',
      'ClusterRoleBinding//openshift-karpenter',
      'Role/openshift-karpenter/openshift-karpenter',
      'RoleBinding/openshift-karpenter/openshift-karpenter',
      'Role/kube-node-lease/openshift-karpenter',
      'RoleBinding/kube-node-lease/openshift-karpenter',
      'CredentialsRequest/openshift-cloud-credential-operator/openshift-karpenter',
      'Karpenter//default',
      'Deployment/openshift-karpenter/karpenter',
      'PodDisruptionBudget/openshift-karpenter/karpenter',
    ]);
    for (const object of render()) {
      expect(object.metadata.labels?.['fleet.karpenter.sh/managed-by']).toBe('karpenter-fleet');
    }
  });

  it('sets the environment exactly as DOMAIN.md describes', () => {
    expect(containerOf(render()).env).toEqual([
      {
        name: 'SYSTEM_NAMESPACE',
        valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } },
      },
      { name: 'CLUSTER_NAME', value: 'prod-east-7xk2p' },
      { name: 'CLUSTER_ENDPOINT', value: 'https://api-int.prod-east.example.com:6443' },
      { name: 'DISABLE_WEBHOOK', value: 'true' },
      { name: 'HEALTH_PROBE_PORT', value: '8081' },
      { name: 'FEATURE_GATES', value: 'Drift=true' },
      { name: 'AWS_REGION', value: 'us-east-1' },
      { name: 'AWS_SHARED_CREDENTIALS_FILE', value: '/etc/provider/credentials' },
      { name: 'AWS_SDK_LOAD_CONFIG', value: 'true' },
    ]);
  });

  it('renders FEATURE_GATES sorted by name', () => {
    expect(
      renderFeatureGates({ SpotToSpotConsolidation: false, Drift: true, NodeRepair: true }),
    ).toBe('Drift=true,NodeRepair=true,SpotToSpotConsolidation=false');
    expect(renderFeatureGates({})).toBe('');
    const env = containerOf(render(desiredState({ featureGates: { B: false, A: true } }))).env;
    expect(env?.find((e) => e.name === 'FEATURE_GATES')?.value).toBe('A=true,B=false');
  });

  it.each(['debug', 'info', 'error'] as const)(
    'passes log level %s to the operand and the CR',
    (level) => {
      const objects = render(desiredState({ logLevel: level }));
      expect(containerOf(objects).args).toEqual([`--log-level=${level}`]);
      expect(find(objects, 'Karpenter').spec).toEqual({ logLevel: level });
    },
  );

  it('runs the pinned image with ports, probes, credentials and scheduling of a control-plane component', () => {
    const objects = render(desiredState(), 'registry.example.com/karpenter@sha256:abc');
    const deployment = deploymentOf(objects);
    const pod = deployment.spec.template.spec!;
    const container = containerOf(objects);
    expect(container.image).toBe('registry.example.com/karpenter@sha256:abc');
    expect(container.ports).toEqual([
      { name: 'http-metrics', containerPort: 8080, protocol: 'TCP' },
      { name: 'http', containerPort: 8081, protocol: 'TCP' },
    ]);
    expect(container.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(container.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(container.volumeMounts).toContainEqual({
      name: 'karpenter-cloud-credentials',
      mountPath: '/etc/provider',
      readOnly: true,
    });
    expect(pod.volumes).toContainEqual({
      name: 'karpenter-cloud-credentials',
      secret: { secretName: 'karpenter-cloud-credentials' },
    });
    expect(pod.priorityClassName).toBe('system-node-critical');
    expect(pod.serviceAccountName).toBe('karpenter');
    expect(container.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
    });
    expect(container.resources?.requests).toEqual({ cpu: '100m', memory: '256Mi' });
    expect(deployment.spec.replicas).toBe(2);
    for (const [k, v] of Object.entries(deployment.spec.selector.matchLabels ?? {})) {
      expect(deployment.spec.template.metadata?.labels?.[k]).toBe(v);
    }
  });

  it('scales to one replica on a single-node control plane and to zero while paused', () => {
    const single = renderAwsOperand(
      { ...infra, controlPlaneTopology: 'SingleReplica' },
      desiredState(),
      { image: DEFAULT_KARPENTER_IMAGE },
    );
    expect(deploymentOf(single).spec.replicas).toBe(1);
    expect(deploymentOf(render(desiredState({ paused: true }))).spec.replicas).toBe(0);
  });

  it('grants what Karpenter needs on the cluster and in its namespace', () => {
    const objects = render();
    const rules = find(objects, 'ClusterRole').rules as {
      apiGroups: string[];
      resources: string[];
      verbs: string[];
    }[];
    const allows = (group: string, resource: string, verb: string) =>
      rules.some(
        (r) =>
          r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb),
      );
    for (const [group, resource, verb] of [
      ['karpenter.sh', 'nodepools', 'watch'],
      ['karpenter.sh', 'nodeclaims', 'create'],
      ['karpenter.sh', 'nodeclaims/status', 'patch'],
      ['karpenter.k8s.aws', 'ec2nodeclasses', 'list'],
      ['karpenter.k8s.aws', 'ec2nodeclasses/status', 'patch'],
      ['', 'nodes', 'delete'],
      ['', 'pods', 'list'],
      ['', 'pods/eviction', 'create'],
      ['', 'events', 'create'],
      ['storage.k8s.io', 'csinodes', 'watch'],
      ['storage.k8s.io', 'storageclasses', 'list'],
      ['policy', 'poddisruptionbudgets', 'list'],
    ] as const) {
      expect([group, resource, verb, allows(group, resource, verb)]).toEqual([
        group,
        resource,
        verb,
        true,
      ]);
    }
    const role = find(objects, 'Role', 'openshift-karpenter').rules as {
      resources: string[];
      verbs: string[];
    }[];
    expect(role.some((r) => r.resources.includes('leases') && r.verbs.includes('create'))).toBe(
      true,
    );
    expect(find(objects, 'ClusterRoleBinding').subjects).toEqual([
      { kind: 'ServiceAccount', name: 'karpenter', namespace: 'openshift-karpenter' },
    ]);
  });

  it('requests AWS credentials the CredentialsRequest CRD accepts', () => {
    const request = find(render(), 'CredentialsRequest');
    expect(request.spec).toMatchObject({
      secretRef: { name: 'karpenter-cloud-credentials', namespace: 'openshift-karpenter' },
      providerSpec: { apiVersion: 'cloudcredential.openshift.io/v1', kind: 'AWSProviderSpec' },
    });
    const actions = (request.spec as { providerSpec: { statementEntries: { action: string[] }[] } })
      .providerSpec.statementEntries[0]?.action;
    expect(actions).toEqual(
      expect.arrayContaining([
        'ec2:CreateFleet',
        'ec2:RunInstances',
        'ec2:TerminateInstances',
        'ec2:DescribeInstances',
        'iam:PassRole',
        'iam:GetInstanceProfile',
        'pricing:GetProducts',
        'ssm:GetParameter',
      ]),
    );
    expect(loadCrdValidator(CREDENTIALS_REQUEST_CRD_PATH).validate(request).errors).toEqual([]);
  });

  it('writes a Karpenter CR its bundled CRD accepts, and the CRD rejects what it should', () => {
    const crd = loadCrdValidator(KARPENTER_CR_CRD_PATH);
    const cr = find(render(), 'Karpenter');
    expect(cr).toEqual({
      apiVersion: 'autoscaling.openshift.io/v1alpha1',
      kind: 'Karpenter',
      metadata: { name: 'default', labels: { 'fleet.karpenter.sh/managed-by': 'karpenter-fleet' } },
      spec: { logLevel: 'info' },
    });
    expect(crd.validate(cr).errors).toEqual([]);
    expect(crd.validate({ ...cr, spec: { logLevel: 'trace' } }).valid).toBe(false);
    expect(crd.validate({ ...cr, metadata: { name: 'other' } }).errors).toEqual([
      `<root>: Invalid value: "object": the only Karpenter object is named 'default'`,
    ]);
  });

  it('is deterministic', () => {
    const a = render(desiredState({ featureGates: { B: true, A: false } }));
    const b = render(desiredState({ featureGates: { A: false, B: true } }));
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
  });
});
