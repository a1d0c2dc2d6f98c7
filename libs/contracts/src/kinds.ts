/**
 * The one vocabulary of Kubernetes kinds, shared by discovery, the CloudProviders and the
 * sidecar: group/version/kind, the REST resource name and scope, as RBAC, watches, lists and
 * pruning need them. A kind that belongs to one cloud (a NodeClass) is defined in that
 * provider's folder with `defineKind`, never here.
 */
export interface ResourceIdentity {
  /** '' for the core group. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
  /** `group/version`, or the bare version for the core group. */
  readonly apiVersion: string;
}

export function defineKind(
  group: string,
  version: string,
  kind: string,
  plural: string,
  namespaced: boolean,
): ResourceIdentity {
  return {
    group,
    version,
    kind,
    plural,
    namespaced,
    apiVersion: group ? `${group}/${version}` : version,
  };
}

/** `/api/v1/...` or `/apis/<group>/<version>/...`, optionally in a namespace. */
export function collectionPath(kind: ResourceIdentity, namespace?: string): string {
  const base = kind.group ? `/apis/${kind.apiVersion}` : `/api/${kind.apiVersion}`;
  return namespace ? `${base}/namespaces/${namespace}/${kind.plural}` : `${base}/${kind.plural}`;
}

const RBAC = 'rbac.authorization.k8s.io';

// Kubernetes
export const NAMESPACE = defineKind('', 'v1', 'Namespace', 'namespaces', false);
export const SERVICE_ACCOUNT = defineKind('', 'v1', 'ServiceAccount', 'serviceaccounts', true);
export const CONFIG_MAP = defineKind('', 'v1', 'ConfigMap', 'configmaps', true);
export const SECRET = defineKind('', 'v1', 'Secret', 'secrets', true);
export const NODE = defineKind('', 'v1', 'Node', 'nodes', false);
export const POD = defineKind('', 'v1', 'Pod', 'pods', true);
export const DEPLOYMENT = defineKind('apps', 'v1', 'Deployment', 'deployments', true);
export const POD_DISRUPTION_BUDGET = defineKind(
  'policy',
  'v1',
  'PodDisruptionBudget',
  'poddisruptionbudgets',
  true,
);
export const CLUSTER_ROLE = defineKind(RBAC, 'v1', 'ClusterRole', 'clusterroles', false);
export const CLUSTER_ROLE_BINDING = defineKind(
  RBAC,
  'v1',
  'ClusterRoleBinding',
  'clusterrolebindings',
  false,
);
export const ROLE = defineKind(RBAC, 'v1', 'Role', 'roles', true);
export const VALIDATING_ADMISSION_POLICY = defineKind(
  'admissionregistration.k8s.io',
  'v1',
  'ValidatingAdmissionPolicy',
  'validatingadmissionpolicies',
  false,
);
export const VALIDATING_ADMISSION_POLICY_BINDING = defineKind(
  'admissionregistration.k8s.io',
  'v1',
  'ValidatingAdmissionPolicyBinding',
  'validatingadmissionpolicybindings',
  false,
);
export const ROLE_BINDING = defineKind(RBAC, 'v1', 'RoleBinding', 'rolebindings', true);
export const CERTIFICATE_SIGNING_REQUEST = defineKind(
  'certificates.k8s.io',
  'v1',
  'CertificateSigningRequest',
  'certificatesigningrequests',
  false,
);

// Karpenter core (every provider)
export const NODEPOOL = defineKind('karpenter.sh', 'v1', 'NodePool', 'nodepools', false);
export const NODECLAIM = defineKind('karpenter.sh', 'v1', 'NodeClaim', 'nodeclaims', false);
/** Karpenter's alpha NodeOverlay: its chart ships the CRD, and some providers wait for it at start. */
export const NODE_OVERLAY = defineKind(
  'karpenter.sh',
  'v1alpha1',
  'NodeOverlay',
  'nodeoverlays',
  false,
);
/** SIG Autoscaling's CapacityBuffer, which Karpenter's chart ships from v1.14. */
export const CAPACITY_BUFFER = defineKind(
  'autoscaling.x-k8s.io',
  'v1beta1',
  'CapacityBuffer',
  'capacitybuffers',
  true,
);

// OpenShift
export const INFRASTRUCTURE = defineKind(
  'config.openshift.io',
  'v1',
  'Infrastructure',
  'infrastructures',
  false,
);
/** The cluster-wide egress proxy (`cluster`); its status is what components must use. */
export const PROXY = defineKind('config.openshift.io', 'v1', 'Proxy', 'proxies', false);
/** The cluster's authentication settings (`cluster`); spec.serviceAccountIssuer marks STS. */
export const AUTHENTICATION = defineKind(
  'config.openshift.io',
  'v1',
  'Authentication',
  'authentications',
  false,
);
/** The Cloud Credential Operator's settings (`cluster`); spec.credentialsMode. */
export const CLOUD_CREDENTIAL = defineKind(
  'operator.openshift.io',
  'v1',
  'CloudCredential',
  'cloudcredentials',
  false,
);
export const CLUSTER_OPERATOR = defineKind(
  'config.openshift.io',
  'v1',
  'ClusterOperator',
  'clusteroperators',
  false,
);
export const MACHINE_SET = defineKind(
  'machine.openshift.io',
  'v1beta1',
  'MachineSet',
  'machinesets',
  true,
);
/** karpenter-operator's settings CR on a standalone OpenShift cluster. */
export const KARPENTER_CR = defineKind(
  'autoscaling.openshift.io',
  'v1alpha1',
  'Karpenter',
  'karpenters',
  false,
);
export const CLUSTER_AUTOSCALER = defineKind(
  'autoscaling.openshift.io',
  'v1',
  'ClusterAutoscaler',
  'clusterautoscalers',
  false,
);
export const MACHINE_AUTOSCALER = defineKind(
  'autoscaling.openshift.io',
  'v1beta1',
  'MachineAutoscaler',
  'machineautoscalers',
  true,
);
export const CREDENTIALS_REQUEST = defineKind(
  'cloudcredential.openshift.io',
  'v1',
  'CredentialsRequest',
  'credentialsrequests',
  true,
);
// OpenShift's Machine Config Operator: how every OpenShift node gets its OS configuration.
export const MACHINE_CONFIG = defineKind(
  'machineconfiguration.openshift.io',
  'v1',
  'MachineConfig',
  'machineconfigs',
  false,
);
export const MACHINE_CONFIG_POOL = defineKind(
  'machineconfiguration.openshift.io',
  'v1',
  'MachineConfigPool',
  'machineconfigpools',
  false,
);
export const KUBELET_CONFIG = defineKind(
  'machineconfiguration.openshift.io',
  'v1',
  'KubeletConfig',
  'kubeletconfigs',
  false,
);
