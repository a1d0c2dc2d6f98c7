import { compareCodeUnits } from '@fleet/contracts';
import type { MigrationProposal, NodeClassOverrides } from '@fleet/contracts';
import { selectWorkerMachineSet } from '@fleet/discovery';
import { proposeNodePools } from '../migration.js';
import {
  openShiftAutoscalerSettings,
  openShiftNodeGroups,
  type MachineSetMachine,
  type OpenShiftAutoscalerObjects,
} from '../openshift/migration.js';
import { ec2InstanceCapacity } from './instance-capacity.js';
import { DEFAULT_NODE_CLASS_NAME, EC2_NODE_CLASS } from './constants.js';

type Rec = Record<string, unknown>;
const rec = (v: unknown): Rec =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Rec) : {};

/** RHCOS AMIs boot from /dev/xvda; the default NodeClass names the AMI's own root device. */
export const RHCOS_ROOT_DEVICE = '/dev/xvda';
/** The installer's root volume, which the default NodeClass uses when the worker set names none. */
const INSTALLER_ROOT_VOLUME_GIB = 120;

/** The machine an AWSMachineProviderConfig describes: type, zone, market. */
export function awsMachine(providerSpec: unknown): MachineSetMachine {
  const spec = rec(providerSpec);
  if (spec.kind !== 'AWSMachineProviderConfig')
    return `providerSpec.value.kind is ${JSON.stringify(spec.kind)}, not AWSMachineProviderConfig`;
  const instanceType = spec.instanceType;
  if (typeof instanceType !== 'string' || instanceType === '')
    return 'providerSpec.value.instanceType is not set';
  const zone = rec(spec.placement).availabilityZone;
  const capacity = ec2InstanceCapacity(instanceType);
  return {
    instanceType,
    ...(typeof zone === 'string' && zone ? { zone } : {}),
    // machine-api-provider-aws launches spot instances when spotMarketOptions is present, even empty.
    capacityType:
      spec.spotMarketOptions !== undefined && spec.spotMarketOptions !== null
        ? 'spot'
        : 'on-demand',
    ...(capacity ? { capacity } : {}),
  };
}

interface RootVolume {
  size: number;
  type?: string;
  encrypted?: boolean;
}

/** The block device without deviceName, as machine-api-provider-aws reads it. */
function rootVolume(machineSet: unknown): RootVolume {
  const value = rec(rec(rec(rec(rec(rec(machineSet).spec).template).spec).providerSpec).value);
  const devices = Array.isArray(value.blockDevices) ? value.blockDevices : [];
  const ebs = rec(rec(devices.find((d) => !rec(d).deviceName)).ebs);
  const size =
    typeof ebs.volumeSize === 'number' && ebs.volumeSize > 0
      ? ebs.volumeSize
      : INSTALLER_ROOT_VOLUME_GIB;
  return {
    size,
    ...(typeof ebs.volumeType === 'string' && ebs.volumeType ? { type: ebs.volumeType } : {}),
    ...(typeof ebs.encrypted === 'boolean' ? { encrypted: ebs.encrypted } : {}),
  };
}

/**
 * Standalone OpenShift on AWS: the Cluster Autoscaler's MachineAutoscalers and their MachineSets
 * as NodePools, and a root volume override where the groups need a larger root volume than the
 * default EC2NodeClass copies from the worker MachineSet discovery chooses. Pure.
 */
export function proposeAwsStandaloneMigration(
  objects: OpenShiftAutoscalerObjects,
  options: { rootDeviceName?: string } = {},
): MigrationProposal {
  const read = openShiftNodeGroups(objects, awsMachine);
  const proposal = proposeNodePools({
    ...read,
    nodeClassRef: {
      group: EC2_NODE_CLASS.group,
      kind: EC2_NODE_CLASS.kind,
      name: DEFAULT_NODE_CLASS_NAME,
    },
    ...(objects.clusterAutoscaler
      ? { settings: openShiftAutoscalerSettings(objects.clusterAutoscaler) }
      : {}),
  });
  const nodeClassOverrides: NodeClassOverrides = {};
  const nodeClassExplanations: string[] = [];
  const proposed = new Set(proposal.nodePools.flatMap((p) => p.replaces));
  const worker = selectWorkerMachineSet([...objects.machineSets]);
  const reference = worker.machineSet ? rootVolume(worker.machineSet) : undefined;
  const volumes = objects.machineSets
    .filter((m) => proposed.has(`MachineSet/${m.metadata.name}`))
    .map((m) => ({ name: m.metadata.name, volume: rootVolume(m) }))
    .sort((a, b) => b.volume.size - a.volume.size || compareCodeUnits(a.name, b.name));
  const largest = volumes[0];
  const referenceSize = reference?.size ?? INSTALLER_ROOT_VOLUME_GIB;
  if (largest && largest.volume.size > referenceSize) {
    const device = options.rootDeviceName ?? RHCOS_ROOT_DEVICE;
    const type = largest.volume.type ?? reference?.type;
    nodeClassOverrides.blockDeviceMappings = [
      {
        deviceName: device,
        rootVolume: true,
        ebs: {
          deleteOnTermination: true,
          volumeSize: `${largest.volume.size}Gi`,
          ...(type ? { volumeType: type } : {}),
          encrypted: largest.volume.encrypted ?? reference?.encrypted ?? true,
        },
      },
    ];
    const smaller = volumes.filter((v) => v.volume.size < largest.volume.size).map((v) => v.name);
    nodeClassExplanations.push(
      `root volume ${largest.volume.size}Gi on ${device}${options.rootDeviceName ? '' : " (RHCOS's root device)"}: MachineSet ${largest.name} has ${largest.volume.size}Gi where the default EC2NodeClass copies ${referenceSize}Gi from ${worker.name ?? 'the installer default'}; one NodeClass serves every proposed NodePool, so the largest root volume is taken${smaller.length > 0 ? ` (${smaller.join(', ')} get more than they had)` : ''}`,
    );
  } else if (largest) {
    nodeClassExplanations.push(
      `no NodeClass override: no group's root volume is larger than the ${referenceSize}Gi the default EC2NodeClass copies from ${worker.name ?? 'the installer default'}`,
    );
  }
  return { ...proposal, nodeClassOverrides, nodeClassExplanations };
}
