import { DEFAULT_KARPENTER_VERSION, KARPENTER_RELEASES, defineKind } from '@fleet/contracts';

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
/**
 * The projected service-account token an STS cluster's components exchange for their role's
 * credentials: where OpenShift mounts it, and the audience its OIDC provider is registered with
 * in IAM (ccoctl registers `openshift`; CCO's STS Secrets name this path as
 * web_identity_token_file).
 */
export const BOUND_SA_TOKEN_VOLUME = 'bound-sa-token';
export const BOUND_SA_TOKEN_DIR = '/var/run/secrets/openshift/serviceaccount';
export const BOUND_SA_TOKEN_FILE = `${BOUND_SA_TOKEN_DIR}/token`;
export const BOUND_SA_TOKEN_AUDIENCE = 'openshift';
/**
 * OpenShift's trusted CA bundle: the Cluster Network Operator fills a ConfigMap labelled
 * config.openshift.io/inject-trusted-cabundle=true with the system CAs plus the Proxy's
 * spec.trustedCA, under the key ca-bundle.crt; mounted where RHEL images keep their bundle.
 */
export const TRUSTED_CA_BUNDLE_CONFIGMAP = 'trusted-ca-bundle';
export const TRUSTED_CA_BUNDLE_KEY = 'ca-bundle.crt';
export const TRUSTED_CA_BUNDLE_DIR = '/etc/pki/ca-trust/extracted/pem';
export const TRUSTED_CA_BUNDLE_FILE = 'tls-ca-bundle.pem';
export const CREDENTIALS_REQUEST_NAME = 'openshift-karpenter';
export const CLOUD_CREDENTIAL_OPERATOR_NAMESPACE = 'openshift-cloud-credential-operator';

export const KARPENTER_CR_NAME = 'default';

/**
 * The default release's image, by digest. Orders name the release and image (the fleet default
 * or the cluster's override), so a fleet-wide change of operand version is a rollout, not an
 * upstream push; this is only what an order without `operand` gets.
 */
export const DEFAULT_KARPENTER_IMAGE: string = KARPENTER_RELEASES[DEFAULT_KARPENTER_VERSION].image;

/** Where the upstream CRDs of a release live, relative to the shipped CRD directory. */
export const karpenterCrdDirectory = (release: string): string =>
  release === DEFAULT_KARPENTER_VERSION ? 'karpenter' : `karpenter-releases/v${release}`;

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
