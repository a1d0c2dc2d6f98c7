import { defineKind } from '@fleet/contracts';

export const EC2_NODE_CLASS = defineKind(
  'karpenter.k8s.aws',
  'v1',
  'EC2NodeClass',
  'ec2nodeclasses',
  false,
);

export const DEFAULT_NODE_CLASS_NAME = 'default';
/** What Karpenter labels every Node it launched with, naming its EC2NodeClass. */
export const EC2_NODE_CLASS_LABEL = 'karpenter.k8s.aws/ec2nodeclass';

export const OPERAND_NAMESPACE = 'openshift-karpenter';
export const OPERAND_NAME = 'karpenter';
export const SERVICE_ACCOUNT_NAME = 'karpenter';
/** Cluster-scoped RBAC names carry the namespace so they cannot collide with a user's own. */
export const CLUSTER_ROLE_NAME = 'openshift-karpenter';

export const CREDENTIALS_SECRET_NAME = 'karpenter-cloud-credentials';
export const CREDENTIALS_MOUNT_PATH = '/etc/provider';
export const CREDENTIALS_REQUEST_NAME = 'openshift-karpenter';
export const CLOUD_CREDENTIAL_OPERATOR_NAMESPACE = 'openshift-cloud-credential-operator';

export const KARPENTER_CR_NAME = 'default';

/**
 * Karpenter v1.14.1, the release whose CRDs the fleet validates against. Pinned so a fleet-wide
 * change of operand version is an explicit rollout, not an upstream push; override per fleet
 * (e.g. a digest in a mirror registry) through AwsCloudProviderOptions.image.
 */
export const DEFAULT_KARPENTER_IMAGE = 'public.ecr.aws/karpenter/controller:1.14.1';

export const METRICS_PORT = 8080;
export const HEALTH_PROBE_PORT = 8081;

/** Tag keys EC2NodeClass.spec.tags may not use (the CRD's CEL rules and DOMAIN.md). */
export const RESTRICTED_TAG_KEYS: readonly string[] = [
  'karpenter.sh/nodepool',
  'karpenter.sh/nodeclaim',
  'karpenter.k8s.aws/ec2nodeclass',
  'eks:eks-cluster-name',
];
export const RESTRICTED_TAG_PREFIX = 'kubernetes.io/cluster';

export const isRestrictedTagKey = (key: string): boolean =>
  key === '' || key.startsWith(RESTRICTED_TAG_PREFIX) || RESTRICTED_TAG_KEYS.includes(key);
