import type { KarpenterDesiredState, NodeClassOverrides } from '@fleet/contracts';
import type { AwsStandaloneInfrastructure } from '@fleet/discovery';
import { canonical, isRecord } from '../canonical.js';
import { InvalidDesiredStateError, type FieldCause } from '../errors.js';
import { ownedLabels } from '../labels.js';
import { mergePatchTo, poolIgnitionPointer } from '../openshift/machine-config.js';
import type { KubeObject, NodeClassEnforcement } from '../types.js';
import {
  DEFAULT_NODE_CLASS_NAME,
  EC2_NODE_CLASS,
  isRestrictedTagKey,
  RESTRICTED_TAG_PREFIX,
} from './constants.js';

const API_VERSION = EC2_NODE_CLASS.apiVersion;
/** What OpenShift installs when the MachineSet leaves the root volume unspecified. */
const DEFAULT_ROOT_DEVICE = '/dev/xvda';
const DEFAULT_VOLUME_SIZE_GIB = 120;
const DEFAULT_VOLUME_TYPE = 'gp3';

export type EC2NodeClass = KubeObject & {
  spec: Record<string, unknown>;
};

/**
 * The fields the adapter owns on every EC2NodeClass: RHCOS boots only from the cluster's AMI
 * with an Ignition pointer to the Machine Config Server, so any other value yields nodes that
 * never join. The pointer is the worker's, moved to the NodeClass's own MachineConfigPool.
 */
export function enforcedNodeClassFields(
  infra: AwsStandaloneInfrastructure,
  nodeClass: string = DEFAULT_NODE_CLASS_NAME,
): {
  amiFamily: 'Custom';
  amiSelectorTerms: { id: string }[];
  userData: string;
} {
  return {
    amiFamily: 'Custom',
    amiSelectorTerms: [{ id: infra.worker.amiID }],
    userData: poolIgnitionPointer(infra.userData, nodeClass),
  };
}

/** Cluster resource tags usable on EC2NodeClass.spec.tags, sorted by key. */
export function clusterNodeClassTags(infra: AwsStandaloneInfrastructure): Record<string, string> {
  const tags: Record<string, string> = {};
  for (const key of Object.keys(infra.resourceTags).sort()) {
    const value = infra.resourceTags[key];
    // Karpenter sets the restricted tags itself; the cluster carrying them is not an error.
    if (value !== undefined && !isRestrictedTagKey(key)) tags[key] = value;
  }
  return tags;
}

export function validateNodeClassOverrides(overrides: NodeClassOverrides): void {
  const causes: FieldCause[] = [];
  for (const key of Object.keys(overrides.tags ?? {}).sort()) {
    if (!isRestrictedTagKey(key)) continue;
    const field = `nodeClassOverrides.tags[${JSON.stringify(key)}]`;
    causes.push({
      field,
      message:
        key === ''
          ? 'empty tag keys are not supported'
          : key.startsWith(RESTRICTED_TAG_PREFIX)
            ? `tag key "${key}" is restricted: keys starting with "${RESTRICTED_TAG_PREFIX}" are set by Karpenter and the cluster`
            : `tag key "${key}" is restricted: Karpenter sets it on every instance it launches`,
    });
  }
  const lists = ['blockDeviceMappings'] as const;
  for (const name of lists) {
    const value = overrides[name];
    if (value !== undefined && value.length === 0) {
      causes.push({
        field: `nodeClassOverrides.${name}`,
        message: 'must not be empty; omit the field to keep the cluster-derived value',
      });
    }
  }
  if (causes.length > 0) throw new InvalidDesiredStateError(causes);
}

function blockDeviceMappings(infra: AwsStandaloneInfrastructure): Record<string, unknown>[] {
  const device = infra.worker.blockDevice;
  const size = device.volumeSize > 0 ? device.volumeSize : DEFAULT_VOLUME_SIZE_GIB;
  return [
    {
      deviceName: device.deviceName || DEFAULT_ROOT_DEVICE,
      // Karpenter derives a node's ephemeral-storage from the root volume; the Custom AMI family
      // has no built-in notion of which mapping that is, so say it.
      rootVolume: true,
      ebs: {
        volumeSize: `${size}Gi`,
        volumeType: device.volumeType || DEFAULT_VOLUME_TYPE,
        encrypted: device.encrypted,
        ...(device.kmsKeyARN ? { kmsKeyID: device.kmsKeyARN } : {}),
      },
    },
  ];
}

/**
 * The EC2NodeClass `default`, from discovery with the SRE's overrides merged in: override tags
 * over cluster tags, blockDeviceMappings/metadataOptions/kubelet replacing the derived value.
 */
export function renderDefaultEC2NodeClass(
  infra: AwsStandaloneInfrastructure,
  overrides: NodeClassOverrides,
): EC2NodeClass {
  validateNodeClassOverrides(overrides);
  const enforced = enforcedNodeClassFields(infra);
  const tags = { ...clusterNodeClassTags(infra), ...(overrides.tags ?? {}) };
  return canonical({
    apiVersion: API_VERSION,
    kind: EC2_NODE_CLASS.kind,
    metadata: { name: DEFAULT_NODE_CLASS_NAME, labels: ownedLabels() },
    spec: {
      amiFamily: enforced.amiFamily,
      amiSelectorTerms: enforced.amiSelectorTerms,
      instanceProfile: infra.worker.instanceProfile,
      subnetSelectorTerms: [
        {
          tags: {
            [`kubernetes.io/cluster/${infra.infraID}`]: '*',
            'kubernetes.io/role/internal-elb': '1',
          },
        },
      ],
      securityGroupSelectorTerms: infra.worker.securityGroups.map((group) =>
        'id' in group ? { id: group.id } : { tags: { Name: group.name } },
      ),
      blockDeviceMappings: overrides.blockDeviceMappings ?? blockDeviceMappings(infra),
      userData: enforced.userData,
      ...(Object.keys(tags).length > 0 ? { tags } : {}),
      ...(overrides.metadataOptions ? { metadataOptions: overrides.metadataOptions } : {}),
      ...(desiredKubelet(overrides) ? { kubelet: desiredKubelet(overrides) } : {}),
    },
  });
}

const sameJSON = (a: unknown, b: unknown): boolean =>
  JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));

/**
 * The apply patch that puts the cluster-derived fields back on any EC2NodeClass as read from
 * the cluster, and `spec.kubelet` back to the desired kubelet settings: on standalone OpenShift
 * those reach the nodes through the pool's KubeletConfig, and Karpenter computes allocatable
 * capacity from `spec.kubelet`, so the two must agree. The rest of a user's NodeClass stays
 * theirs.
 */
export function enforceEC2NodeClass(
  live: KubeObject,
  infra: AwsStandaloneInfrastructure,
  desired?: Pick<KarpenterDesiredState, 'nodeClassOverrides'>,
): NodeClassEnforcement {
  const enforced = enforcedNodeClassFields(infra, live.metadata.name);
  const spec = isRecord(live.spec) ? live.spec : {};
  const drifted = (Object.keys(enforced) as (keyof typeof enforced)[])
    .filter((field) => !sameJSON(spec[field], enforced[field]))
    .map((field) => `spec.${field}`);
  const kubelet = desired ? desiredKubelet(desired.nodeClassOverrides) : spec.kubelet;
  const kubeletDrifted = !sameJSON(spec.kubelet, kubelet);
  if (kubeletDrifted) drifted.push('spec.kubelet');
  return {
    patch: canonical({
      apiVersion: API_VERSION,
      kind: EC2_NODE_CLASS.kind,
      metadata: { name: live.metadata.name },
      spec: enforced,
    }),
    ...(kubeletDrifted
      ? {
          mergePatch: {
            apiVersion: API_VERSION,
            kind: EC2_NODE_CLASS.kind,
            metadata: { name: live.metadata.name },
            spec: { kubelet: mergePatchTo(spec.kubelet, kubelet) },
          },
        }
      : {}),
    drifted: drifted.sort(),
  };
}

/** The kubelet settings every NodeClass carries: the desired ones, or none. */
export function desiredKubelet(overrides: NodeClassOverrides): Record<string, unknown> | undefined {
  return overrides.kubelet && Object.keys(overrides.kubelet).length > 0
    ? canonical(overrides.kubelet)
    : undefined;
}
