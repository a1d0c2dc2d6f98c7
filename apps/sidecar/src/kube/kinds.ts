/** The kinds the sidecar reads or watches beyond what the CloudProvider renders. */
export interface Kind {
  apiVersion: string;
  kind: string;
  /** REST resource name, for watch paths. */
  plural: string;
  namespaced: boolean;
}

export const DEPLOYMENT: Kind = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  plural: 'deployments',
  namespaced: true,
};
export const CONFIG_MAP: Kind = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  plural: 'configmaps',
  namespaced: true,
};
export const NODE: Kind = { apiVersion: 'v1', kind: 'Node', plural: 'nodes', namespaced: false };
export const POD: Kind = { apiVersion: 'v1', kind: 'Pod', plural: 'pods', namespaced: true };
export const CSR: Kind = {
  apiVersion: 'certificates.k8s.io/v1',
  kind: 'CertificateSigningRequest',
  plural: 'certificatesigningrequests',
  namespaced: false,
};
export const NODE_CLAIM: Kind = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodeClaim',
  plural: 'nodeclaims',
  namespaced: false,
};
export const NODE_POOL: Kind = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  plural: 'nodepools',
  namespaced: false,
};
export const EC2_NODE_CLASS: Kind = {
  apiVersion: 'karpenter.k8s.aws/v1',
  kind: 'EC2NodeClass',
  plural: 'ec2nodeclasses',
  namespaced: false,
};
export const KARPENTER: Kind = {
  apiVersion: 'autoscaling.openshift.io/v1alpha1',
  kind: 'Karpenter',
  plural: 'karpenters',
  namespaced: false,
};
export const CLUSTER_AUTOSCALER: Kind = {
  apiVersion: 'autoscaling.openshift.io/v1',
  kind: 'ClusterAutoscaler',
  plural: 'clusterautoscalers',
  namespaced: false,
};
export const MACHINE_AUTOSCALER: Kind = {
  apiVersion: 'autoscaling.openshift.io/v1beta1',
  kind: 'MachineAutoscaler',
  plural: 'machineautoscalers',
  namespaced: true,
};

/** `/api/v1/...` or `/apis/<group>/<version>/...`, optionally in a namespace. */
export function collectionPath(kind: Kind, namespace?: string): string {
  const base = kind.apiVersion.includes('/')
    ? `/apis/${kind.apiVersion}`
    : `/api/${kind.apiVersion}`;
  return namespace ? `${base}/namespaces/${namespace}/${kind.plural}` : `${base}/${kind.plural}`;
}
