import { z } from 'zod';

import type { DiscoveryFailure } from '../types.js';
import { describeIssues } from '../zod-issues.js';

const INFRASTRUCTURE_NAME = 'cluster';
const DEFAULT_CLOUD_NAME = 'AzurePublicCloud';

/**
 * The cloud names the fork resolves (ARM_CLOUD, trimmed and upper-cased, looked up in
 * cloud-provider-azure's azclient.EnvironmentMapping; pkg/auth/environment.go at 8e5b2e51): any
 * other makes its controller exit at start with "unknown cloud name". OpenShift's
 * AzureGermanCloud and AzureStackCloud are not among them.
 */
const FORK_CLOUD_NAMES = new Set([
  'AZURECHINACLOUD',
  'AZURECLOUD',
  'AZUREPUBLICCLOUD',
  'AZUREUSGOVERNMENT',
  'AZUREUSGOVERNMENTCLOUD',
]);

const AzureInfrastructure = z.object({
  status: z.object({
    infrastructureName: z.string().min(1),
    apiServerInternalURI: z.string().min(1),
    controlPlaneTopology: z.string().min(1).optional(),
    platformStatus: z.object({
      type: z.literal('Azure'),
      azure: z.object({
        resourceGroupName: z.string().min(1),
        networkResourceGroupName: z.string().optional(),
        cloudName: z.string().optional(),
        armEndpoint: z.string().optional(),
        resourceTags: z.array(z.object({ key: z.string().min(1), value: z.string() })).optional(),
      }),
    }),
  }),
});

export interface AzureClusterInfrastructure {
  infraID: string;
  apiServerInternalURI: string;
  controlPlaneTopology: string;
  resourceGroup: string;
  networkResourceGroup?: string;
  cloudName: string;
  armEndpoint?: string;
  resourceTags: Record<string, string>;
}

/** Reads Infrastructure/cluster (config.openshift.io/v1) of a cluster expected to run on Azure. */
export function parseAzureInfrastructure(
  object: unknown,
): { ok: true; value: AzureClusterInfrastructure } | DiscoveryFailure {
  const status = (
    object as { status?: { platform?: unknown; platformStatus?: { type?: unknown } } }
  )?.status;
  // status.platform is the pre-4.2 field; platformStatus.type supersedes it.
  const platform = status?.platformStatus?.type ?? status?.platform;
  if (typeof platform !== 'string') {
    return {
      ok: false,
      reason: 'InvalidInfrastructure',
      message: `Infrastructure ${INFRASTRUCTURE_NAME}: status.platformStatus.type is not set`,
    };
  }
  if (platform !== 'Azure') {
    return {
      ok: false,
      reason: 'UnsupportedPlatform',
      message: `Infrastructure ${INFRASTRUCTURE_NAME} reports platform ${platform}; Azure discovery needs platform Azure`,
    };
  }
  const parsed = AzureInfrastructure.safeParse(object);
  if (!parsed.success) {
    return {
      ok: false,
      reason: 'InvalidInfrastructure',
      message: `Infrastructure ${INFRASTRUCTURE_NAME}: ${describeIssues(parsed.error, '')}`,
    };
  }
  const { infrastructureName, apiServerInternalURI, controlPlaneTopology, platformStatus } =
    parsed.data.status;
  const azure = platformStatus.azure;
  const cloudName = azure.cloudName || DEFAULT_CLOUD_NAME;
  if (!FORK_CLOUD_NAMES.has(cloudName.trim().toUpperCase())) {
    return {
      ok: false,
      reason: 'CloudNotSupported',
      message: `Infrastructure ${INFRASTRUCTURE_NAME}: status.platformStatus.azure.cloudName ${cloudName} is not a cloud the OpenShift fork of karpenter-provider-azure knows (AzurePublicCloud, AzureChinaCloud, AzureUSGovernmentCloud); its controller would exit at start with "unknown cloud name"`,
    };
  }
  return {
    ok: true,
    value: {
      infraID: infrastructureName,
      apiServerInternalURI,
      controlPlaneTopology: controlPlaneTopology ?? 'HighlyAvailable',
      resourceGroup: azure.resourceGroupName,
      ...(azure.networkResourceGroupName
        ? { networkResourceGroup: azure.networkResourceGroupName }
        : {}),
      cloudName,
      ...(azure.armEndpoint ? { armEndpoint: azure.armEndpoint } : {}),
      resourceTags: Object.fromEntries((azure.resourceTags ?? []).map((t) => [t.key, t.value])),
    },
  };
}
