import { z } from 'zod';

import type { DiscoveryFailure } from '../types.js';
import { describeIssues } from '../zod-issues.js';

export const INFRASTRUCTURE_NAME = 'cluster';

const PlatformProbe = z.object({
  status: z
    .object({
      platform: z.string().optional(),
      platformStatus: z.object({ type: z.string().optional() }).optional(),
    })
    .optional(),
});

const AwsInfrastructure = z.object({
  status: z.object({
    infrastructureName: z.string().min(1),
    apiServerInternalURI: z.string().min(1),
    controlPlaneTopology: z.string().min(1).optional(),
    platformStatus: z.object({
      type: z.literal('AWS'),
      aws: z.object({
        region: z.string().min(1),
        resourceTags: z.array(z.object({ key: z.string().min(1), value: z.string() })).optional(),
      }),
    }),
  }),
});

export interface AwsClusterInfrastructure {
  infraID: string;
  region: string;
  apiServerInternalURI: string;
  controlPlaneTopology: string;
  resourceTags: Record<string, string>;
}

/** Reads Infrastructure/cluster (config.openshift.io/v1) of a cluster expected to run on AWS. */
export function parseAwsInfrastructure(
  object: unknown,
): { ok: true; value: AwsClusterInfrastructure } | DiscoveryFailure {
  const probe = PlatformProbe.safeParse(object);
  // status.platform is the pre-4.2 field; platformStatus.type supersedes it.
  const platform = probe.success
    ? (probe.data.status?.platformStatus?.type ?? probe.data.status?.platform)
    : undefined;
  if (platform === undefined) {
    return {
      ok: false,
      reason: 'InvalidInfrastructure',
      message: `Infrastructure ${INFRASTRUCTURE_NAME}: status.platformStatus.type is not set`,
    };
  }
  if (platform !== 'AWS') {
    return {
      ok: false,
      reason: 'UnsupportedPlatform',
      message: `Infrastructure ${INFRASTRUCTURE_NAME} reports platform ${platform}; AWS standalone discovery needs platform AWS`,
    };
  }
  const parsed = AwsInfrastructure.safeParse(object);
  if (!parsed.success) {
    return {
      ok: false,
      reason: 'InvalidInfrastructure',
      message: `Infrastructure ${INFRASTRUCTURE_NAME}: ${describeIssues(parsed.error, '')}`,
    };
  }
  const status = parsed.data.status;
  return {
    ok: true,
    value: {
      infraID: status.infrastructureName,
      region: status.platformStatus.aws.region,
      apiServerInternalURI: status.apiServerInternalURI,
      controlPlaneTopology: status.controlPlaneTopology ?? 'HighlyAvailable',
      resourceTags: Object.fromEntries(
        (status.platformStatus.aws.resourceTags ?? []).map((t) => [t.key, t.value]),
      ),
    },
  };
}
