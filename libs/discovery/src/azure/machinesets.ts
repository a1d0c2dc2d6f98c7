import { z } from 'zod';

import type { DiscoveryFailure } from '../types.js';
import { describeIssues } from '../zod-issues.js';
import {
  DEFAULT_USER_DATA_SECRET,
  MACHINE_API_NAMESPACE,
  MachineSetHeader,
  selectWorkerMachineSet as selectOpenShiftWorker,
  type AcceleratedMachineType,
} from '../openshift/worker-machinesets.js';
import type {
  AzureCloudCredentials,
  AzureMarketplaceImage,
  AzureWorkerMachineSet,
} from './types.js';

const PROVIDER_SPEC_PATH = 'spec.template.spec.providerSpec.value';
export const DEFAULT_CREDENTIALS_SECRET = 'azure-cloud-credentials';

// The N series (NC, ND, NG, NV) are Azure's GPU sizes.
const ACCELERATED_VM_SIZE = /^Standard_N[CDGV]/i;

/** An Azure VM size with GPUs, as the worker selection asks. */
export const acceleratedVmSize: AcceleratedMachineType = (providerSpec) => {
  const vmSize = (providerSpec as { vmSize?: unknown } | null | undefined)?.vmSize;
  return typeof vmSize === 'string' && ACCELERATED_VM_SIZE.test(vmSize)
    ? `VM size ${vmSize}`
    : undefined;
};

/** The general-purpose worker MachineSets of an Azure cluster, first candidate first. */
export const selectAzureWorkerMachineSet = (machineSets: unknown[]) =>
  selectOpenShiftWorker(machineSets, acceleratedVmSize);

const AzureMachineProviderSpec = z.object({
  apiVersion: z.literal('machine.openshift.io/v1beta1'),
  kind: z.literal('AzureMachineProviderSpec'),
  vmSize: z.string().min(1),
  location: z.string().optional(),
  image: z.object({
    publisher: z.string().optional(),
    offer: z.string().optional(),
    sku: z.string().optional(),
    version: z.string().optional(),
    resourceID: z.string().optional(),
    type: z.enum(['', 'ID', 'MarketplaceNoPlan', 'MarketplaceWithPlan']).optional(),
  }),
  osDisk: z.object({
    osType: z.string().optional(),
    diskSizeGB: z.number().int().positive(),
  }),
  vnet: z.string().min(1),
  subnet: z.string().min(1),
  networkResourceGroup: z.string().optional(),
  resourceGroup: z.string().optional(),
  managedIdentity: z.string().optional(),
  tags: z.record(z.string(), z.string()).nullish(),
  zone: z.string().nullish(),
  userDataSecret: z.object({ name: z.string().optional() }).nullish(),
  credentialsSecret: z
    .object({ name: z.string().optional(), namespace: z.string().optional() })
    .nullish(),
});
type AzureMachineProviderSpec = z.infer<typeof AzureMachineProviderSpec>;

/** A worker MachineSet's providerSpec as written, before the credentials fill its defaults. */
export interface AzureWorkerProviderSpec {
  name: string;
  spec: AzureMachineProviderSpec;
  credentialsSecret: { namespace: string; name: string };
}

/** Reads the Azure providerSpec of a worker MachineSet. */
export function parseAzureWorkerMachineSet(
  machineSet: unknown,
): { ok: true; value: AzureWorkerProviderSpec } | DiscoveryFailure {
  const header = MachineSetHeader.safeParse(machineSet);
  if (!header.success) return invalid('MachineSet', describeIssues(header.error, ''));
  const name = header.data.metadata.name;
  const where = `MachineSet ${MACHINE_API_NAMESPACE}/${name}`;
  const providerSpec = header.data.spec?.template?.spec?.providerSpec?.value;
  if (providerSpec === undefined || providerSpec === null) {
    return invalid(where, `${PROVIDER_SPEC_PATH}: not set`);
  }
  const parsed = AzureMachineProviderSpec.safeParse(providerSpec);
  if (!parsed.success) return invalid(where, describeIssues(parsed.error, PROVIDER_SPEC_PATH));
  const spec = parsed.data;
  if (spec.osDisk.osType !== undefined && spec.osDisk.osType.toLowerCase() === 'windows') {
    return invalid(
      where,
      `${PROVIDER_SPEC_PATH}.osDisk.osType: Windows; Karpenter's nodes run RHCOS`,
    );
  }
  return {
    ok: true,
    value: {
      name,
      spec,
      credentialsSecret: {
        namespace: spec.credentialsSecret?.namespace || MACHINE_API_NAMESPACE,
        name: spec.credentialsSecret?.name || DEFAULT_CREDENTIALS_SECRET,
      },
    },
  };
}

/**
 * The worker as machine-api-provider-azure launches it: resource groups and location default to
 * the credentials' (`azure_resourcegroup`, `azure_region`), a bare managed identity name becomes
 * its full ARM ID, and the image must be one the OpenShift fork of karpenter-provider-azure can
 * boot (`imageOf`).
 */
export function resolveAzureWorker(
  worker: AzureWorkerProviderSpec,
  credentials: AzureCloudCredentials,
): { ok: true; value: AzureWorkerMachineSet } | DiscoveryFailure {
  const { name, spec } = worker;
  const where = `MachineSet ${MACHINE_API_NAMESPACE}/${name}`;
  const fromCredentials = `the credentials Secret ${credentials.secret.namespace}/${credentials.secret.name}`;
  const resourceGroup = spec.resourceGroup || credentials.resourceGroup;
  if (!resourceGroup) {
    return invalid(
      where,
      `${PROVIDER_SPEC_PATH}.resourceGroup: not set, and ${fromCredentials} has no azure_resourcegroup`,
    );
  }
  const networkResourceGroup = spec.networkResourceGroup || credentials.resourceGroup;
  if (!networkResourceGroup) {
    return invalid(
      where,
      `${PROVIDER_SPEC_PATH}.networkResourceGroup: not set, and ${fromCredentials} has no azure_resourcegroup`,
    );
  }
  const location = spec.location || credentials.region;
  if (!location) {
    return invalid(
      where,
      `${PROVIDER_SPEC_PATH}.location: not set, and ${fromCredentials} has no azure_region`,
    );
  }
  const image = imageOf(where, spec.image);
  if (!image.ok) return image;
  const identity = spec.managedIdentity;
  return {
    ok: true,
    value: {
      name,
      vmSize: spec.vmSize,
      location,
      image: image.value,
      osDiskSizeGB: spec.osDisk.diskSizeGB,
      vnet: spec.vnet,
      subnet: spec.subnet,
      networkResourceGroup,
      resourceGroup,
      ...(identity
        ? {
            managedIdentityID: identity.startsWith('/')
              ? identity
              : `/subscriptions/${credentials.subscriptionID}/resourcegroups/${resourceGroup}/providers/Microsoft.ManagedIdentity/userAssignedIdentities/${identity}`,
          }
        : {}),
      tags: spec.tags ?? {},
      ...(spec.zone ? { zone: spec.zone } : {}),
      userDataSecretName: spec.userDataSecret?.name || DEFAULT_USER_DATA_SECRET,
    },
  };
}

/** What would make a refused image work, said once for every refusal. */
export const SUPPORTED_IMAGES =
  "karpenter-provider-azure's OpenShift mode (openshift/Azure-karpenter-provider-azure pull request 6, not merged) " +
  'boots only an AKSNodeClass marketplaceImage {publisher, offer, sku, version} without a purchase plan; ' +
  'clusters whose worker MachineSets use a no-plan marketplace image (for example publisher azureopenshift, offer aro4) can run Karpenter';

/**
 * The worker's image as the fork's marketplaceImage. openshift/api's rule for an empty `type`:
 * a marketplace image without a plan when a publisher is given, an image by resource ID otherwise.
 */
function imageOf(
  where: string,
  image: AzureMachineProviderSpec['image'],
): { ok: true; value: AzureMarketplaceImage } | DiscoveryFailure {
  const path = `${PROVIDER_SPEC_PATH}.image`;
  const type = image.type || (image.publisher ? 'MarketplaceNoPlan' : 'ID');
  if (type === 'ID') {
    return {
      ok: false,
      reason: 'ImageNotSupported',
      message:
        `${where} boots from ${image.resourceID ? `the image ${image.resourceID}` : 'an image'} given by ${path}.resourceID ` +
        `(a gallery or managed image, as the installer creates by default); ${SUPPORTED_IMAGES}`,
    };
  }
  const named = `${image.publisher ?? ''}:${image.offer ?? ''}:${image.sku ?? ''}:${image.version ?? ''}`;
  if (type === 'MarketplaceWithPlan') {
    return {
      ok: false,
      reason: 'ImageNotSupported',
      message: `${where} boots from the marketplace image ${named}, which needs a purchase plan (${path}.type MarketplaceWithPlan); ${SUPPORTED_IMAGES}`,
    };
  }
  const missing = (['publisher', 'offer', 'sku', 'version'] as const).filter((k) => !image[k]);
  if (missing.length > 0) {
    return invalid(
      where,
      `${path}: a marketplace image needs ${missing.map((k) => `${path}.${k}`).join(', ')}`,
    );
  }
  return {
    ok: true,
    value: {
      publisher: image.publisher!,
      offer: image.offer!,
      sku: image.sku!,
      version: image.version!,
    },
  };
}

function invalid(where: string, detail: string): DiscoveryFailure {
  return { ok: false, reason: 'InvalidWorkerMachineSet', message: `${where}: ${detail}` };
}
