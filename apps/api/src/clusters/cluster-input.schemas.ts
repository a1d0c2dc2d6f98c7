import {
  KarpenterVersion,
  imageByDigest,
  iamRoleArn,
  sqsQueueName,
  ClusterAutoscalerMode,
  DriftPolicy,
  FeatureGates,
  LogLevel,
  dns1123Label,
  dns1123Subdomain,
  instanceTypeName,
} from '@fleet/contracts';
import { CLUSTER_API_INFRASTRUCTURE_PROVIDERS } from '@fleet/cloud-provider';
import { z } from 'zod';

// Kubernetes label syntax: optional DNS-subdomain prefix, a name of at most 63 characters.
const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const labelKey = z.string().refine(
  (key) => {
    const slash = key.lastIndexOf('/');
    const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
    const name = slash >= 0 ? key.slice(slash + 1) : key;
    const prefixOk = prefix === undefined || dns1123Subdomain.safeParse(prefix).success;
    return prefixOk && name.length <= 63 && LABEL_NAME.test(name);
  },
  { message: 'must be a Kubernetes label key: [prefix/]name, name at most 63 characters' },
);
const labelValue = z
  .string()
  .max(63, 'label values must be no more than 63 characters')
  .regex(/^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/, 'must be a valid Kubernetes label value');

export const Labels = z.record(labelKey, labelValue).refine((l) => Object.keys(l).length <= 64, {
  message: 'at most 64 labels',
});

const region = z
  .string()
  .min(1, 'must not be empty')
  .max(64, 'must be no more than 64 characters')
  .regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, 'must be a cloud region such as us-east-1 or eastus');

export const RegisterClusterSchema = z
  .object({
    name: dns1123Label,
    topology: z.enum(['STANDALONE', 'HOSTED']),
    platform: z.enum(['AWS', 'CAPI', 'AZURE']),
    region,
    infraID: z
      .string()
      .max(128, 'must be no more than 128 characters')
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a lower-case infrastructure ID')
      .nullish(),
    labels: Labels.nullish(),
    managementCluster: dns1123Subdomain.nullish(),
    hcpNamespace: dns1123Label.nullish(),
    clusterApiName: dns1123Subdomain.nullish(),
    clusterApiNamespace: dns1123Label.nullish(),
    infrastructureProvider: z
      .enum(CLUSTER_API_INFRASTRUCTURE_PROVIDERS as [string, ...string[]], {
        error: `must be an infrastructure provider of the Cluster API driver: ${CLUSTER_API_INFRASTRUCTURE_PROVIDERS.join(', ')}`,
      })
      .nullish(),
  })
  .superRefine((input, ctx) => {
    const capiFields = ['clusterApiName', 'clusterApiNamespace', 'infrastructureProvider'] as const;
    if (input.platform === 'CAPI') {
      if (!input.clusterApiName)
        ctx.addIssue({
          code: 'custom',
          path: ['clusterApiName'],
          message: 'is required for CAPI clusters (the Cluster to run Karpenter for)',
        });
    } else {
      for (const field of capiFields)
        if (input[field])
          ctx.addIssue({ code: 'custom', path: [field], message: 'is only for CAPI clusters' });
    }
    if (input.topology !== 'HOSTED') return;
    for (const field of ['managementCluster', 'hcpNamespace'] as const) {
      if (!input[field]) {
        ctx.addIssue({ code: 'custom', path: [field], message: 'is required for HOSTED clusters' });
      }
    }
  });

export const SetKarpenterSchema = z.object({
  enabled: z.boolean().nullish(),
  paused: z.boolean().nullish(),
  clusterAutoscalerMode: ClusterAutoscalerMode.nullish(),
  logLevel: LogLevel.nullish(),
  featureGates: FeatureGates.nullish(),
  karpenterVersion: KarpenterVersion.nullish(),
  operandImage: imageByDigest.nullish(),
  interruptionQueue: sqsQueueName.nullish(),
  driftPolicy: DriftPolicy.nullish(),
  webIdentityRoleArn: iamRoleArn.nullish(),
  allowedInstanceTypes: z
    .array(instanceTypeName)
    .max(32, 'at most 32 instance types')
    .refine((t) => new Set(t).size === t.length, 'must not name an instance type twice')
    .nullish(),
  expectedGeneration: z.number().int().positive().nullish(),
});

export const NodePoolNameSchema = dns1123Subdomain;
export const ExpectedGeneration = z.number().int().positive().nullish();
