import {
  DEFAULT_KARPENTER_IMAGE,
  renderAwsOperand,
  renderDefaultAKSNodeClass,
  renderDefaultEC2NodeClass,
} from '@fleet/cloud-provider';
import {
  azureFixtureInfrastructure,
  capiFixtureObjects,
  desiredState,
  fixtureInfrastructure,
  fixtureObjects,
  hostedFixtureObjects,
  type KubeObject,
} from '@fleet/testing';
import type {
  Answer,
  DifferentialScript,
  DifferentialStep,
} from '../support/control-plane/differential.js';

// One script per resource the product is granted (differential-coverage.ts): the same object
// created, read, listed, watched, patched, updated (its status too) and deleted on both
// servers. Samples are what the product renders or what the fixture clusters hold.

const NAMESPACE = 'default';

/** `group/resource` → how it is reached and, for a written one, the object to write. */
interface ResourceCase {
  resource: string;
  version: string;
  namespaced: boolean;
  /** Omitted: only read (list, get of a missing name, a watch), as the product only reads it. */
  sample?: KubeObject;
  status?: boolean;
}

const desired = desiredState();
const awsOperand = renderAwsOperand(fixtureInfrastructure(), desired, {
  image: DEFAULT_KARPENTER_IMAGE,
});
const pool: KubeObject[] = [
  ...(awsOperand as unknown as KubeObject[]),
  ...(fixtureObjects() as KubeObject[]),
  ...capiFixtureObjects(),
  ...hostedFixtureObjects(),
];

function sampleOf(apiVersion: string, kind: string): KubeObject {
  const found = pool.find((o) => o.apiVersion === apiVersion && o.kind === kind);
  if (!found) throw new Error(`no sample ${apiVersion} ${kind}`);
  return found;
}

const podTemplate = (
  sampleOf('apps/v1', 'Deployment').spec as { template: KubeObject & { spec: unknown } }
).template;

const REQUIREMENTS = [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }];
const NODE_CLASS_REF = { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' };

/** A NodePool as the product renders one, with more of its spec where given. */
export const nodePoolSample = (name: string, spec: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name },
  spec: {
    template: { spec: { requirements: REQUIREMENTS, nodeClassRef: NODE_CLASS_REF } },
    ...spec,
  },
});

/** A NodeClaim as Karpenter creates one, with more of its metadata where given. */
export const nodeClaimSample = (
  name: string,
  metadata: Record<string, unknown> = {},
): KubeObject => ({
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodeClaim',
  metadata: { name, ...metadata },
  spec: { nodeClassRef: NODE_CLASS_REF, requirements: REQUIREMENTS },
});

const CASES: ResourceCase[] = [
  {
    resource: '/configmaps',
    version: 'v1',
    namespaced: true,
    sample: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: '' }, data: { a: '1' } },
  },
  {
    resource: '/events',
    version: 'v1',
    namespaced: true,
    sample: {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: '' },
      involvedObject: { apiVersion: 'v1', kind: 'Node', name: 'node-a' },
      reason: 'Launched',
      message: 'launched a node',
      type: 'Normal',
      source: { component: 'karpenter' },
    },
  },
  {
    resource: '/namespaces',
    version: 'v1',
    namespaced: false,
    sample: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: '' } },
  },
  {
    resource: '/nodes',
    version: 'v1',
    namespaced: false,
    sample: {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: '' },
      spec: { providerID: 'aws:///us-east-1a/i-0123456789abcdef0' },
    },
    status: true,
  },
  { resource: '/persistentvolumeclaims', version: 'v1', namespaced: true },
  { resource: '/persistentvolumes', version: 'v1', namespaced: false },
  {
    resource: '/pods',
    version: 'v1',
    namespaced: true,
    sample: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: '' },
      // The operand's pod, under the ServiceAccount the TokenRequest script creates (the
      // ServiceAccount admission plugin refuses a pod whose account does not exist, and no
      // controller makes `default` here).
      spec: { ...(podTemplate.spec as object), serviceAccountName: 'robot' },
    },
    status: true,
  },
  { resource: '/podtemplates', version: 'v1', namespaced: true },
  { resource: '/replicationcontrollers', version: 'v1', namespaced: true },
  {
    resource: '/secrets',
    version: 'v1',
    namespaced: true,
    sample: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: '' },
      type: 'Opaque',
      stringData: { token: 'x' },
    },
  },
  {
    resource: '/serviceaccounts',
    version: 'v1',
    namespaced: true,
    sample: sampleOf('v1', 'ServiceAccount'),
  },
  {
    resource: 'admissionregistration.k8s.io/validatingadmissionpolicies',
    version: 'v1',
    namespaced: false,
    sample: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: '' },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: [''],
              apiVersions: ['v1'],
              operations: ['CREATE'],
              resources: ['configmaps'],
            },
          ],
        },
        validations: [
          {
            expression: "!has(object.data) || !('forbidden' in object.data)",
            message: 'no forbidden key',
          },
        ],
      },
    },
    status: true,
  },
  {
    resource: 'admissionregistration.k8s.io/validatingadmissionpolicybindings',
    version: 'v1',
    namespaced: false,
    sample: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: '' },
      spec: {
        policyName: 'unused-policy',
        validationActions: ['Deny'],
        matchResources: { namespaceSelector: { matchLabels: { unused: 'yes' } } },
      },
    },
  },
  { resource: 'apps/daemonsets', version: 'v1', namespaced: true },
  {
    resource: 'apps/deployments',
    version: 'v1',
    namespaced: true,
    sample: sampleOf('apps/v1', 'Deployment'),
    status: true,
  },
  { resource: 'apps/replicasets', version: 'v1', namespaced: true },
  { resource: 'apps/statefulsets', version: 'v1', namespaced: true },
  {
    resource: 'autoscaling.openshift.io/clusterautoscalers',
    version: 'v1',
    namespaced: false,
    sample: sampleOf('autoscaling.openshift.io/v1', 'ClusterAutoscaler'),
  },
  { resource: 'autoscaling.openshift.io/karpenters', version: 'v1', namespaced: false },
  {
    resource: 'autoscaling.openshift.io/machineautoscalers',
    version: 'v1beta1',
    namespaced: true,
    sample: sampleOf('autoscaling.openshift.io/v1beta1', 'MachineAutoscaler'),
    status: true,
  },
  { resource: 'autoscaling.x-k8s.io/capacitybuffers', version: 'v1alpha1', namespaced: true },
  { resource: 'certificates.k8s.io/certificatesigningrequests', version: 'v1', namespaced: false },
  {
    resource: 'cloudcredential.openshift.io/credentialsrequests',
    version: 'v1',
    namespaced: true,
    sample: sampleOf('cloudcredential.openshift.io/v1', 'CredentialsRequest'),
  },
  {
    resource: 'cluster.x-k8s.io/clusters',
    version: 'v1beta1',
    namespaced: true,
    sample: sampleOf('cluster.x-k8s.io/v1beta1', 'Cluster'),
    status: true,
  },
  {
    resource: 'cluster.x-k8s.io/machinedeployments',
    version: 'v1beta1',
    namespaced: true,
    sample: sampleOf('cluster.x-k8s.io/v1beta1', 'MachineDeployment'),
    status: true,
  },
  {
    resource: 'cluster.x-k8s.io/machines',
    version: 'v1beta1',
    namespaced: true,
    sample: {
      apiVersion: 'cluster.x-k8s.io/v1beta1',
      kind: 'Machine',
      metadata: { name: '' },
      spec: {
        clusterName: 'capi-east',
        bootstrap: { dataSecretName: 'capi-east-bootstrap' },
        infrastructureRef: {
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta2',
          kind: 'AWSMachine',
          name: 'capi-east-machine',
        },
      },
    },
    status: true,
  },
  {
    resource: 'cluster.x-k8s.io/machinesets',
    version: 'v1beta1',
    namespaced: true,
    sample: sampleOf('cluster.x-k8s.io/v1beta1', 'MachineSet'),
    status: true,
  },
  { resource: 'config.openshift.io/authentications', version: 'v1', namespaced: false },
  {
    resource: 'config.openshift.io/clusteroperators',
    version: 'v1',
    namespaced: false,
    sample: {
      apiVersion: 'config.openshift.io/v1',
      kind: 'ClusterOperator',
      metadata: { name: '' },
      spec: {},
    },
    status: true,
  },
  { resource: 'config.openshift.io/infrastructures', version: 'v1', namespaced: false },
  { resource: 'config.openshift.io/nodes', version: 'v1', namespaced: false },
  { resource: 'config.openshift.io/proxies', version: 'v1', namespaced: false },
  {
    resource: 'coordination.k8s.io/leases',
    version: 'v1',
    namespaced: true,
    sample: {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: '' },
      spec: { holderIdentity: 'karpenter-0', leaseDurationSeconds: 15 },
    },
  },
  {
    resource: 'hypershift.openshift.io/hostedclusters',
    version: 'v1beta1',
    namespaced: true,
    sample: sampleOf('hypershift.openshift.io/v1beta1', 'HostedCluster'),
    status: true,
  },
  {
    resource: 'hypershift.openshift.io/hostedcontrolplanes',
    version: 'v1beta1',
    namespaced: true,
    sample: sampleOf('hypershift.openshift.io/v1beta1', 'HostedControlPlane'),
    status: true,
  },
  {
    resource: 'infrastructure.cluster.x-k8s.io/awsmachinetemplates',
    version: 'v1beta2',
    namespaced: true,
    sample: sampleOf('infrastructure.cluster.x-k8s.io/v1beta2', 'AWSMachineTemplate'),
  },
  {
    resource: 'karpenter.azure.com/aksnodeclasses',
    version: 'v1beta1',
    namespaced: false,
    sample: renderDefaultAKSNodeClass(azureFixtureInfrastructure(), {}) as unknown as KubeObject,
    status: true,
  },
  {
    resource: 'karpenter.cluster.x-k8s.io/clusterapinodeclasses',
    version: 'v1alpha1',
    namespaced: false,
    sample: {
      apiVersion: 'karpenter.cluster.x-k8s.io/v1alpha1',
      kind: 'ClusterAPINodeClass',
      metadata: { name: '' },
      spec: {
        scalableResourceSelector: { matchLabels: { 'karpenter.example.com/pool': 'general' } },
      },
    },
    status: true,
  },
  {
    resource: 'karpenter.k8s.aws/ec2nodeclasses',
    version: 'v1',
    namespaced: false,
    sample: renderDefaultEC2NodeClass(fixtureInfrastructure(), {}) as unknown as KubeObject,
    status: true,
  },
  {
    resource: 'karpenter.sh/nodeclaims',
    version: 'v1',
    namespaced: false,
    sample: nodeClaimSample(''),
    status: true,
  },
  { resource: 'karpenter.sh/nodeoverlays', version: 'v1alpha1', namespaced: false },
  {
    resource: 'karpenter.sh/nodepools',
    version: 'v1',
    namespaced: false,
    sample: nodePoolSample(''),
    status: true,
  },
  { resource: 'machine.openshift.io/machinesets', version: 'v1beta1', namespaced: true },
  {
    resource: 'machineconfiguration.openshift.io/kubeletconfigs',
    version: 'v1',
    namespaced: false,
    sample: {
      apiVersion: 'machineconfiguration.openshift.io/v1',
      kind: 'KubeletConfig',
      metadata: { name: '' },
      spec: {
        machineConfigPoolSelector: {
          matchLabels: { 'pools.operator.machineconfiguration.openshift.io/karpenter': '' },
        },
        kubeletConfig: { maxPods: 250 },
      },
    },
    status: true,
  },
  {
    resource: 'machineconfiguration.openshift.io/machineconfigpools',
    version: 'v1',
    namespaced: false,
    sample: sampleOf('machineconfiguration.openshift.io/v1', 'MachineConfigPool'),
    status: true,
  },
  { resource: 'operator.openshift.io/cloudcredentials', version: 'v1', namespaced: false },
  {
    resource: 'policy/poddisruptionbudgets',
    version: 'v1',
    namespaced: true,
    sample: sampleOf('policy/v1', 'PodDisruptionBudget'),
    status: true,
  },
  {
    resource: 'rbac.authorization.k8s.io/clusterrolebindings',
    version: 'v1',
    namespaced: false,
    sample: sampleOf('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding'),
  },
  {
    resource: 'rbac.authorization.k8s.io/clusterroles',
    version: 'v1',
    namespaced: false,
    sample: sampleOf('rbac.authorization.k8s.io/v1', 'ClusterRole'),
  },
  {
    resource: 'rbac.authorization.k8s.io/rolebindings',
    version: 'v1',
    namespaced: true,
    sample: sampleOf('rbac.authorization.k8s.io/v1', 'RoleBinding'),
  },
  {
    resource: 'rbac.authorization.k8s.io/roles',
    version: 'v1',
    namespaced: true,
    sample: sampleOf('rbac.authorization.k8s.io/v1', 'Role'),
  },
  { resource: 'resource.k8s.io/deviceclasses', version: 'v1', namespaced: false },
  { resource: 'resource.k8s.io/resourceclaims', version: 'v1', namespaced: true },
  { resource: 'resource.k8s.io/resourceslices', version: 'v1', namespaced: false },
  { resource: 'storage.k8s.io/csinodes', version: 'v1', namespaced: false },
  { resource: 'storage.k8s.io/storageclasses', version: 'v1', namespaced: false },
  { resource: 'storage.k8s.io/volumeattachments', version: 'v1', namespaced: false },
];

/** The sample as a new object named `name`: what the product writes, without what the server owns. */
function fresh(sample: KubeObject, name: string, namespaced: boolean): KubeObject {
  const { status: _status, metadata, ...rest } = sample as KubeObject & { status?: unknown };
  return {
    ...rest,
    metadata: {
      name,
      ...(namespaced ? { namespace: NAMESPACE } : {}),
      labels: { ...(metadata?.labels ?? {}), differential: name },
      ...(metadata?.annotations ? { annotations: metadata.annotations } : {}),
    },
  };
}

const withLabel = (earlier: readonly Answer[], step: number, key: string) => {
  const object = structuredClone(earlier[step]!.body) as KubeObject;
  object.metadata = { ...object.metadata, labels: { ...object.metadata?.labels, [key]: 'yes' } };
  return object;
};

function scriptFor(c: ResourceCase): DifferentialScript {
  const [group, plural] = c.resource.split('/') as [string, string];
  const base = group ? `/apis/${group}/${c.version}` : `/api/${c.version}`;
  const collection = `${base}${c.namespaced ? `/namespaces/${NAMESPACE}` : ''}/${plural}`;
  const name = `differential-${plural}`;
  const item = `${collection}/${name}`;
  const labelled = `labelSelector=differential%3D${name}`;
  if (!c.sample)
    return {
      name: `${c.resource}: list, get and watch`,
      steps: [
        { method: 'GET', path: `${collection}?${labelled}` },
        { method: 'GET', path: item },
        { method: 'GET', path: `${collection}?watch=1&${labelled}&timeoutSeconds=1`, events: 1 },
      ],
    };
  const steps: DifferentialStep[] = [
    { method: 'POST', path: collection, body: fresh(c.sample, name, c.namespaced), expect: 201 },
    { method: 'GET', path: item, expect: 200 },
    { method: 'GET', path: `${collection}?${labelled}`, expect: 200 },
    {
      method: 'PATCH',
      path: item,
      body: { metadata: { labels: { patched: 'yes' } } },
      contentType: 'application/merge-patch+json',
      expect: 200,
    },
    // Resumed from the create: the patch, and nothing before it.
    {
      method: 'GET',
      path: `${collection}?watch=1&${labelled}&resourceVersion={resourceVersion:0}`,
      events: 1,
    },
    {
      method: 'PUT',
      path: item,
      body: (e: readonly Answer[]) => withLabel(e, 3, 'updated'),
      expect: 200,
    },
  ];
  if (c.status)
    steps.push(
      { method: 'GET', path: `${item}/status`, expect: 200 },
      {
        method: 'PATCH',
        path: `${item}/status`,
        body: { metadata: { labels: { 'status-patched': 'yes' } } },
        contentType: 'application/merge-patch+json',
        expect: 200,
      },
      {
        method: 'PUT',
        path: `${item}/status`,
        body: (e: readonly Answer[]) => withLabel(e, 7, 'status-updated'),
        expect: 200,
      },
    );
  // Gone at once, or once its finalizers' controllers are done (a namespace's).
  steps.push(
    { method: 'DELETE', path: item, expect: 200 },
    { method: 'GET', path: item, until: 404 },
  );
  return { name: `${c.resource}: create, read, list, watch, patch, update, delete`, steps };
}

export const RESOURCE_SCRIPTS: DifferentialScript[] = CASES.map(scriptFor);
