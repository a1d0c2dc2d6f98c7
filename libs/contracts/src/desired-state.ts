import { z } from 'zod';

/** DNS-1123 subdomain, as Kubernetes requires of object names. */
export const DNS1123_SUBDOMAIN =
  /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** DNS-1123 label: cluster names become label values and queue names, so they stay labels. */
export const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export const dns1123Label = z
  .string()
  .min(1, 'must not be empty')
  .max(63, 'must be no more than 63 characters')
  .regex(
    DNS1123_LABEL,
    "must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
  );

export const dns1123Subdomain = z
  .string()
  .min(1, 'must not be empty')
  .max(253, 'must be no more than 253 characters')
  .regex(
    DNS1123_SUBDOMAIN,
    "must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
  );

export const ClusterAutoscalerMode = z.enum(['KEEP', 'DISABLE', 'MIGRATE']);
export type ClusterAutoscalerMode = z.infer<typeof ClusterAutoscalerMode>;

/**
 * What the sidecar does when another field manager changes a field the fleet manages, or deletes
 * an object the fleet owns: CORRECT puts it back at once (and reports the correction), REPORT
 * leaves it as it is and reports it (Drifted=True) until the edit is undone or the policy changes.
 */
export const DriftPolicy = z.enum(['CORRECT', 'REPORT']);
export type DriftPolicy = z.infer<typeof DriftPolicy>;

export const LogLevel = z.enum(['debug', 'info', 'error']);
export type LogLevel = z.infer<typeof LogLevel>;

/** Karpenter feature gate names are CamelCase words (Drift, SpotToSpotConsolidation, ...). */
export const FeatureGates = z.record(
  z.string().regex(/^[A-Z][A-Za-z0-9]*$/, 'feature gate names are CamelCase, e.g. Drift'),
  z.boolean(),
);
export type FeatureGates = z.infer<typeof FeatureGates>;

/**
 * A NodePool as the fleet holds it: its name and its `spec` exactly as karpenter.sh/v1 defines
 * it. The spec is checked against the real NodePool CRD before it is stored (see crd-schema).
 */
export const DesiredNodePool = z.object({
  name: dns1123Subdomain,
  spec: z.record(z.string(), z.unknown()),
});
export type DesiredNodePool = z.infer<typeof DesiredNodePool>;

/**
 * Fields of the platform's NodeClass that a fleet SRE may set on top of what discovery derives.
 * Enforced fields (AMI, user data, amiFamily) are not overridable: the adapter keeps them in
 * line with the cluster.
 */
export const NodeClassOverrides = z
  .object({
    blockDeviceMappings: z.array(z.record(z.string(), z.unknown())).optional(),
    tags: z.record(z.string(), z.string()).optional(),
    metadataOptions: z.record(z.string(), z.unknown()).optional(),
    kubelet: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();
export type NodeClassOverrides = z.infer<typeof NodeClassOverrides>;

/**
 * Karpenter releases this project ships CRDs for (libs/crd-schema/upstream: the newest in
 * `karpenter/`, the others in `karpenter-releases/<version>/`), each with the controller image
 * by digest as the release's Helm chart pins it (aws/karpenter-provider-aws
 * charts/karpenter/values.yaml at the release's "Stable Release updates" commit). By digest, so
 * that ImageDigestMirrorSets of disconnected clusters apply and a tag moved upstream changes
 * nothing.
 */
export const KARPENTER_RELEASES = {
  '1.14.1': {
    image:
      'public.ecr.aws/karpenter/controller@sha256:723130949e4cab989461ff07d1be4cd781d63515432494641b33c235f300ae23',
  },
  '1.13.1': {
    image:
      'public.ecr.aws/karpenter/controller@sha256:4d5d576e8ba007948869b379740554a7cd8642ad2bbaa7ea9cf907c141a31f5d',
  },
} as const;
export type KarpenterVersion = keyof typeof KARPENTER_RELEASES;
/** The fleet default when neither the fleet nor the cluster names a version. */
export const DEFAULT_KARPENTER_VERSION: KarpenterVersion = '1.14.1';
export const KARPENTER_VERSIONS = Object.keys(KARPENTER_RELEASES) as KarpenterVersion[];

export const KarpenterVersion = z.enum(
  KARPENTER_VERSIONS as [KarpenterVersion, ...KarpenterVersion[]],
  {
    error: `must be a Karpenter version this fleet ships CRDs for: ${Object.keys(KARPENTER_RELEASES).join(', ')}`,
  },
);

/**
 * `<registry>/<repository>@sha256:<64 hex>` (a tag before the digest is allowed and ignored by
 * the runtime, as CRI-O does): mirror rules (ImageDigestMirrorSet) only apply to pulls by digest.
 */
export const IMAGE_BY_DIGEST =
  /^[a-z0-9]+([._-][a-z0-9]+)*(\.[a-z0-9-]+)*(:[0-9]+)?(\/[a-z0-9]+([._-][a-z0-9]+)*)+(:[\w][\w.-]{0,127})?@sha256:[0-9a-f]{64}$/;
export const imageByDigest = z
  .string()
  .max(512, 'must be no more than 512 characters')
  .regex(
    IMAGE_BY_DIGEST,
    'must be an image reference by digest, e.g. quay.io/example/karpenter@sha256:<64 hex digits>',
  );

/** The operand the cluster runs: which release (and so which CRDs) and from which image. */
export const KarpenterOperand = z
  .object({ version: KarpenterVersion, image: imageByDigest })
  .strict();
export type KarpenterOperand = z.infer<typeof KarpenterOperand>;

/** The release's own image unless the fleet or the cluster names a mirror's. */
export const operandFor = (version: KarpenterVersion, image?: string | null): KarpenterOperand => ({
  version,
  image: image ?? KARPENTER_RELEASES[version].image,
});

/** An SQS queue name (the queue Karpenter's interruption handling reads Spot and health events from). */
export const sqsQueueName = z
  .string()
  .regex(
    /^[A-Za-z0-9_-]{1,80}$/,
    'must be an SQS queue name: 1 to 80 letters, digits, hyphens or underscores',
  );

/**
 * An IAM role ARN (arn:<partition>:iam::<12-digit account>:role/<optional path/>name), the
 * role the operand assumes with its service-account token on a Manual/STS cluster.
 */
export const iamRoleArn = z
  .string()
  .max(2048, 'must be no more than 2048 characters')
  .regex(
    /^arn:aws(-[a-z]+)*:iam::\d{12}:role\/([\x21-\x7e]+\/)?[\w+=,.@-]{1,64}$/,
    'must be an IAM role ARN, e.g. arn:aws:iam::123456789012:role/karpenter',
  );

/** A cloud's instance type name (m6i.xlarge, Standard_D4s_v5); the cloud itself judges it. */
export const instanceTypeName = z
  .string()
  .max(64, 'must be no more than 64 characters')
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]*$/,
    'must be an instance type name: letters, digits, dots, hyphens or underscores',
  );

/** The whole desired Karpenter state of one cluster, as an order carries it. */
export const KarpenterDesiredState = z.object({
  enabled: z.boolean(),
  paused: z.boolean(),
  clusterAutoscalerMode: ClusterAutoscalerMode,
  logLevel: LogLevel,
  featureGates: FeatureGates,
  nodePools: z.array(DesiredNodePool),
  nodeClassOverrides: NodeClassOverrides,
  /**
   * Resolved by the fleet (cluster override, else fleet default). Absent from orders of fleets
   * older than this field: the sidecar then runs its built-in default release.
   */
  operand: KarpenterOperand.optional(),
  /** Spot interruption and instance health events: the SQS queue Karpenter reads, if any. */
  interruptionQueue: sqsQueueName.optional(),
  /**
   * The IAM role the operand assumes with its projected service-account token where the Cloud
   * Credential Operator runs in Manual/STS mode (no CredentialsRequest is minted there).
   */
  webIdentityRoleArn: iamRoleArn.optional(),
  /**
   * Cluster API: the instance types the fleet renders a MachineDeployment for (one per failure
   * domain). Absent: the type of the worker template the fleet copies.
   */
  allowedInstanceTypes: z.array(instanceTypeName).min(1).max(32).optional(),
  /** Absent (orders of fleets older than drift policies, and the default): CORRECT. */
  driftPolicy: DriftPolicy.optional(),
});
export type KarpenterDesiredState = z.infer<typeof KarpenterDesiredState>;

export const DEFAULT_FEATURE_GATES: FeatureGates = { Drift: true };
