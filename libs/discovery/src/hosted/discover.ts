import { DEPLOYMENT } from '@fleet/contracts';
import { fail, readCluster as read, Stop } from '../stop.js';
import type { ClusterObjectReader } from '../cluster-reader.js';
import { describeError } from '../describe-error.js';
import type { DiscoveryResult } from '../types.js';
import {
  HOSTED_CLUSTER_ANNOTATION,
  HOSTED_CONTROL_PLANE,
  HYPERSHIFT_KARPENTER_OPERAND,
  HYPERSHIFT_KARPENTER_OPERATOR,
  KARPENTER_INSTANCE_PROFILE_ANNOTATION,
} from './kinds.js';
import type {
  AutoNodeCounts,
  AutoNodeSpec,
  HostedAwsInfrastructure,
  HostedModeObservation,
  HostedRelease,
} from './types.js';

const record = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const text = (v: unknown): string | undefined =>
  typeof v === 'string' && v.length > 0 ? v : undefined;
const count = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined;

/** spec.autoNode of a HostedCluster or HostedControlPlane; undefined when not configured. */
export function parseAutoNode(spec: unknown): AutoNodeSpec | undefined {
  const autoNode = record(record(spec).autoNode);
  const provisioner = record(autoNode.provisionerConfig);
  const name = text(provisioner.name);
  if (!name) return undefined;
  const karpenter = record(provisioner.karpenter);
  const platform = text(karpenter.platform);
  const roleARN = text(record(karpenter.aws).roleARN);
  return {
    provisioner: name,
    ...(platform ? { platform } : {}),
    ...(roleARN ? { roleARN } : {}),
  };
}

/** status.autoNode, as HyperShift's karpenter-operator writes it. */
export function parseAutoNodeStatus(status: unknown): AutoNodeCounts {
  const autoNode = record(record(status).autoNode);
  const out: AutoNodeCounts = {};
  const nodeCount = count(autoNode.nodeCount);
  const nodeClaimCount = count(autoNode.nodeClaimCount);
  const vcpus = count(autoNode.vcpus);
  if (nodeCount !== undefined) out.nodeCount = nodeCount;
  if (nodeClaimCount !== undefined) out.nodeClaimCount = nodeClaimCount;
  if (vcpus !== undefined) out.vcpus = vcpus;
  return out;
}

function parseRelease(status: unknown): HostedRelease {
  const versionStatus = record(record(status).versionStatus);
  const desired = record(versionStatus.desired);
  const history = Array.isArray(versionStatus.history) ? versionStatus.history : [];
  const partial = text(record(history[0]).state) === 'Partial';
  const completedBefore = history
    .slice(1)
    .some((entry) => text(record(entry).state) === 'Completed');
  const desiredVersion = text(desired.version);
  const desiredImage = text(desired.image);
  return {
    ...(desiredVersion ? { desiredVersion } : {}),
    ...(desiredImage ? { desiredImage } : {}),
    updating: partial && completedBefore,
    installing: partial && !completedBefore,
  };
}

export interface HostedDiscoveryInput {
  /** Reads on the management cluster. */
  reader: ClusterObjectReader;
  /** The HCP namespace the sidecar runs in. */
  hcpNamespace: string;
}

/**
 * Learns what the fleet needs from the one HostedControlPlane of an HCP namespace: the
 * HostedCluster it belongs to, infraID, region, release status, AutoNode spec and status, and
 * the Karpenter instance profile HyperShift made. Never throws: each missing piece is its own
 * Degraded reason naming the object and field.
 */
export async function discoverHostedAws(
  input: HostedDiscoveryInput,
): Promise<DiscoveryResult<HostedAwsInfrastructure>> {
  try {
    const infrastructure = await discover(input);
    return {
      ok: true,
      infrastructure,
      conditions: [
        {
          type: 'HostedControlPlaneDiscovered',
          status: 'True',
          reason: infrastructure.release.updating
            ? 'ControlPlaneUpdating'
            : infrastructure.release.installing
              ? 'ControlPlaneInstalling'
              : 'AsExpected',
          message:
            `HostedControlPlane ${input.hcpNamespace}/${infrastructure.hcpName} of HostedCluster ` +
            `${infrastructure.hostedCluster.namespace}/${infrastructure.hostedCluster.name}, infraID ` +
            `${infrastructure.infraID}, region ${infrastructure.region}` +
            (infrastructure.release.desiredVersion
              ? `, release ${infrastructure.release.desiredVersion}${infrastructure.release.updating ? ' (updating)' : infrastructure.release.installing ? ' (installing)' : ''}`
              : ''),
        },
      ],
    };
  } catch (err) {
    if (err instanceof Stop) return err.failure;
    return {
      ok: false,
      reason: 'KubernetesLookupFailed',
      message: `hosted control plane discovery failed: ${describeError(err)}`,
    };
  }
}

async function discover({
  reader,
  hcpNamespace,
}: HostedDiscoveryInput): Promise<HostedAwsInfrastructure> {
  const where = `namespace ${hcpNamespace}`;
  const hcps = await read(`HostedControlPlanes in ${where}`, () =>
    reader.listObjects(HOSTED_CONTROL_PLANE, hcpNamespace),
  );
  if (hcps.length === 0) fail('HostedControlPlaneNotFound', `no HostedControlPlane in ${where}`);
  if (hcps.length > 1) {
    const names = hcps.map((h) => text(record(record(h).metadata).name) ?? '?').sort();
    fail(
      'MultipleHostedControlPlanes',
      `${where} holds ${hcps.length} HostedControlPlanes (${names.join(', ')}); an HCP namespace holds one`,
    );
  }
  const hcp = record(hcps[0]);
  const metadata = record(hcp.metadata);
  const name = text(metadata.name) ?? '';
  const what = `HostedControlPlane ${hcpNamespace}/${name}`;
  const annotations = record(metadata.annotations);
  const ref = text(annotations[HOSTED_CLUSTER_ANNOTATION]);
  const [hcNamespace, hcName, ...rest] = (ref ?? '').split('/');
  if (!hcNamespace || !hcName || rest.length > 0) {
    fail(
      'HostedClusterReferenceMissing',
      `${what}: metadata.annotations["${HOSTED_CLUSTER_ANNOTATION}"] must be <namespace>/<name> of its HostedCluster` +
        (ref ? `, not "${ref}"` : ', and is missing'),
    );
  }
  const spec = record(hcp.spec);
  const platform = record(spec.platform);
  const type = text(platform.type);
  if (type !== 'AWS') {
    fail(
      'UnsupportedPlatform',
      `${what}: spec.platform.type is ${type ?? 'unset'}; the hosted driver serves AWS`,
    );
  }
  const infraID = text(spec.infraID);
  if (!infraID) fail('InfraIDMissing', `${what}: spec.infraID is empty`);
  const region = text(record(platform.aws).region);
  if (!region) fail('RegionMissing', `${what}: spec.platform.aws.region is empty`);
  const autoNode = parseAutoNode(spec);
  const instanceProfile = text(annotations[KARPENTER_INSTANCE_PROFILE_ANNOTATION]);
  const resourceTags = (
    Array.isArray(record(platform.aws).resourceTags)
      ? (record(platform.aws).resourceTags as unknown[])
      : []
  ).flatMap((t) => {
    const key = text(record(t).key);
    const overridePolicy = text(record(t).overridePolicy);
    return key
      ? [{ key, value: text(record(t).value) ?? '', ...(overridePolicy ? { overridePolicy } : {}) }]
      : [];
  });
  const endpoint = record(record(hcp.status).controlPlaneEndpoint);
  const host = text(endpoint.host);
  const port = count(endpoint.port);
  return {
    hcpNamespace,
    hcpName: name,
    hostedCluster: { namespace: hcNamespace, name: hcName },
    infraID,
    region,
    release: parseRelease(hcp.status),
    ...(autoNode ? { autoNode } : {}),
    autoNodeStatus: parseAutoNodeStatus(hcp.status),
    ...(instanceProfile ? { instanceProfile } : {}),
    resourceTags,
    ...(host ? { controlPlaneEndpoint: `https://${host}:${port ?? 443}` } : {}),
    deleting: text(metadata.deletionTimestamp) !== undefined,
    finalizers: (Array.isArray(metadata.finalizers) ? (metadata.finalizers as unknown[]) : [])
      .map(text)
      .filter((f): f is string => f !== undefined),
  };
}

function deploymentCounts(deployment: unknown): {
  replicas: number;
  availableReplicas: number;
  updatedReplicas: number;
} {
  const status = record(record(deployment).status);
  const spec = record(record(deployment).spec);
  return {
    replicas: count(spec.replicas) ?? 1,
    availableReplicas: count(status.availableReplicas) ?? 0,
    updatedReplicas: count(status.updatedReplicas) ?? 0,
  };
}

/**
 * Which Karpenter runs for this hosted cluster: HyperShift's karpenter-operator Deployment in the
 * HCP namespace, its operand, and spec.autoNode on the HostedControlPlane. Throws on a failed read
 * (the caller cannot decide a mode without it).
 */
export async function observeHostedMode(
  reader: ClusterObjectReader,
  hcpNamespace: string,
  hcp: Pick<HostedAwsInfrastructure, 'autoNode'>,
): Promise<HostedModeObservation> {
  const [operator, operand] = await Promise.all([
    reader.getObject(DEPLOYMENT, hcpNamespace, HYPERSHIFT_KARPENTER_OPERATOR),
    reader.getObject(DEPLOYMENT, hcpNamespace, HYPERSHIFT_KARPENTER_OPERAND),
  ]);
  return {
    hypershiftOperator: operator !== undefined,
    ...(operand !== undefined ? { operand: deploymentCounts(operand) } : {}),
    autoNodeConfigured: hcp.autoNode !== undefined,
  };
}
