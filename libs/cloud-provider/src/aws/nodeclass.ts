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
/**
 * The root volume when the worker MachineSet describes none: what the OpenShift installer gives
 * workers and karpenter-operator's defaultBlockDeviceMappings (120Gi gp3 encrypted).
 */
const DEFAULT_ROOT_VOLUME = { volumeSize: 120, volumeType: 'gp3', encrypted: true } as const;

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

type Volume = NonNullable<AwsStandaloneInfrastructure['worker']['rootVolume']>;

/**
 * One EC2NodeClass block device mapping for a MachineSet volume, field for field what
 * machine-api-provider-aws sends to EC2 (pkg/actuators/machine/instances.go,
 * getBlockDeviceMappings): deleteOnTermination always true there; a field it leaves out stays
 * out, so Karpenter leaves it to EC2 as well.
 */
function mapping(deviceName: string, volume: Volume, rootVolume: boolean): Record<string, unknown> {
  return {
    deviceName,
    // Karpenter derives a node's ephemeral-storage from the root volume; the Custom AMI family
    // has no built-in notion of which mapping that is, so say it.
    ...(rootVolume ? { rootVolume: true } : {}),
    ebs: {
      deleteOnTermination: true,
      ...(volume.volumeSize !== undefined ? { volumeSize: `${volume.volumeSize}Gi` } : {}),
      ...(volume.volumeType !== undefined ? { volumeType: volume.volumeType } : {}),
      ...(volume.encrypted !== undefined ? { encrypted: volume.encrypted } : {}),
      ...(volume.iops !== undefined ? { iops: volume.iops } : {}),
      ...(volume.throughputMiB !== undefined ? { throughput: volume.throughputMiB } : {}),
      ...(volume.kmsKeyID !== undefined ? { kmsKeyID: volume.kmsKeyID } : {}),
    },
  };
}

/** The root volume mapping: the MachineSet's, else the installer's default. */
function rootVolumeMapping(infra: AwsStandaloneInfrastructure): Record<string, unknown> {
  return mapping(infra.rootDeviceName, infra.worker.rootVolume ?? DEFAULT_ROOT_VOLUME, true);
}

function blockDeviceMappings(infra: AwsStandaloneInfrastructure): Record<string, unknown>[] {
  return [
    rootVolumeMapping(infra),
    ...infra.worker.dataVolumes.map((v) => mapping(v.deviceName, v, false)),
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
  const enforced: Record<string, unknown> = {
    ...enforcedNodeClassFields(infra, live.metadata.name),
  };
  const spec = isRecord(live.spec) ? live.spec : {};
  const drifted = Object.keys(enforced)
    .filter((field) => !sameJSON(spec[field], enforced[field]))
    .map((field) => `spec.${field}`);
  // A NodeClass without blockDeviceMappings would boot RHCOS on the AMI snapshot's 16 GiB root
  // volume: give it the default NodeClass's root volume, as karpenter-operator's applyDefaults
  // does. Only while it has none: once a user sets theirs, their field manager owns the field.
  // While it still holds exactly that default the patch keeps it, so that a later correction of
  // the other fields does not drop the field from this manager's apply (which would delete it).
  // The default NodeClass's mappings are the desired state's (overrides included), not this.
  const mappings = spec.blockDeviceMappings;
  const defaults = [rootVolumeMapping(infra)];
  const userClass = live.metadata.name !== DEFAULT_NODE_CLASS_NAME;
  if (userClass && (!Array.isArray(mappings) || mappings.length === 0)) {
    enforced.blockDeviceMappings = defaults;
    drifted.push('spec.blockDeviceMappings');
  } else if (userClass && sameJSON(mappings, defaults)) {
    enforced.blockDeviceMappings = defaults;
  }
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
