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

/** The whole desired Karpenter state of one cluster, as an order carries it. */
export const KarpenterDesiredState = z.object({
  enabled: z.boolean(),
  paused: z.boolean(),
  clusterAutoscalerMode: ClusterAutoscalerMode,
  logLevel: LogLevel,
  featureGates: FeatureGates,
  nodePools: z.array(DesiredNodePool),
  nodeClassOverrides: NodeClassOverrides,
});
export type KarpenterDesiredState = z.infer<typeof KarpenterDesiredState>;

export const DEFAULT_FEATURE_GATES: FeatureGates = { Drift: true };
