import { defineKind } from '@fleet/contracts';

/** The OpenShift fork's AKSNodeClass (karpenter.azure.com/v1beta1, the stored version). */
export const AKS_NODE_CLASS = defineKind(
  'karpenter.azure.com',
  'v1beta1',
  'AKSNodeClass',
  'aksnodeclasses',
  false,
);

/** The fork's CRD, relative to the Karpenter CRD directory (libs/crd-schema/upstream/karpenter). */
export const AKS_NODE_CLASS_CRD_FILE = 'karpenter.azure.com_aksnodeclasses.openshift-fork-pr6.yaml';

/**
 * The fork's own karpenter.sh CRDs (NodePool, NodeClaim, NodeOverlay), relative to the upstream
 * CRD directory: generated from the Karpenter it builds on, with its own label-domain rules.
 */
export const FORK_CRD_DIRECTORY = 'karpenter-azure-openshift-pr6';

export const DEFAULT_NODE_CLASS_NAME = 'default';
/** What Karpenter labels every Node it launched with, naming its AKSNodeClass (`<group>/<kind>`). */
export const AKS_NODE_CLASS_LABEL = 'karpenter.azure.com/aksnodeclass';

export const OPERAND_NAMESPACE = 'openshift-karpenter';
export const OPERAND_NAME = 'karpenter';
export const SERVICE_ACCOUNT_NAME = 'karpenter';
/** Cluster-scoped RBAC names carry the namespace so they cannot collide with a user's own. */
export const CLUSTER_ROLE_NAME = 'openshift-karpenter';

/**
 * Tag keys AKSNodeClass.spec.tags must not carry: karpenter-provider-azure sets these on every
 * VM it creates (`karpenter.azure.com_cluster`, `karpenter.sh_nodepool`, `compute.aks.billing`)
 * and silently overrides a user's value. Azure tag keys use `_` where Kubernetes labels use `/`.
 * OpenShift's own `kubernetes.io_cluster.<infraID>` stays: machine-api-provider-azure puts it
 * on every worker VM too.
 */
export const RESTRICTED_TAG_KEYS: readonly string[] = [
  'karpenter.azure.com_cluster',
  'karpenter.sh_nodepool',
  'karpenter.sh_nodeclaim',
  'compute.aks.billing',
];

/**
 * The key a tag gets on the VM: the fork maps every `/` to `_` in the NodeClass's tags and its own
 * before merging them, its own last (pkg/providers/launchtemplate/tags.go at 8e5b2e51), so
 * `karpenter.sh/nodepool` and `karpenter.sh_nodepool` are the same tag.
 */
export const azureTagKey = (key: string): string => key.replaceAll('/', '_');

export const isRestrictedTagKey = (key: string): boolean =>
  key === '' || RESTRICTED_TAG_KEYS.includes(azureTagKey(key));

/** What the cloud-credential-operator writes for the operand (CredentialsRequest below). */
export const CREDENTIALS_SECRET_NAME = 'karpenter-cloud-credentials';
export const CREDENTIALS_REQUEST_NAME = 'openshift-karpenter';
export const CLOUD_CREDENTIAL_OPERATOR_NAMESPACE = 'openshift-cloud-credential-operator';
/** The projected service-account token a workload-identity cluster's components exchange. */
export const BOUND_SA_TOKEN_VOLUME = 'bound-sa-token';
export const BOUND_SA_TOKEN_DIR = '/var/run/secrets/openshift/serviceaccount';
/** The audience OpenShift's Azure workload identity federates (ccoctl azure). */
export const BOUND_SA_TOKEN_AUDIENCE = 'openshift';

export const METRICS_PORT = 8080;
export const HEALTH_PROBE_PORT = 8081;
