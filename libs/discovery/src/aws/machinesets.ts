import { z } from 'zod';

import type { DiscoveryFailure } from '../types.js';
import type { EbsVolume, WorkerMachineSet } from './types.js';
import { describeIssues } from '../zod-issues.js';
import {
  DEFAULT_USER_DATA_SECRET,
  MACHINE_API_NAMESPACE,
  MachineSetHeader,
  selectWorkerMachineSet as selectOpenShiftWorker,
  type AcceleratedMachineType,
} from '../openshift/worker-machinesets.js';

export {
  DEFAULT_USER_DATA_SECRET,
  MACHINE_API_NAMESPACE,
  MACHINE_ROLE_LABEL,
  OS_ID_LABEL,
  WINDOWS_USER_DATA_SECRET,
  type SkippedMachineSet,
} from '../openshift/worker-machinesets.js';

export const PROVIDER_SPEC_API_VERSIONS = [
  'machine.openshift.io/v1beta1',
  // Clusters installed before 4.x GA'd the machine API still carry this apiVersion.
  'awsproviderconfig.openshift.io/v1beta1',
] as const;

const PROVIDER_SPEC_PATH = 'spec.template.spec.providerSpec.value';

const Filter = z.object({ name: z.string(), values: z.array(z.string()).optional() });
const ResourceReference = z.object({
  id: z.string().optional(),
  arn: z.string().optional(),
  filters: z.array(Filter).optional(),
});
type ResourceReference = z.infer<typeof ResourceReference>;

const AWSMachineProviderConfig = z.object({
  apiVersion: z.enum(PROVIDER_SPEC_API_VERSIONS),
  kind: z.literal('AWSMachineProviderConfig'),
  ami: ResourceReference,
  instanceType: z.string().min(1),
  iamInstanceProfile: ResourceReference,
  securityGroups: z.array(ResourceReference).min(1),
  subnet: ResourceReference.optional(),
  blockDevices: z
    .array(
      z.object({
        deviceName: z.string().nullish(),
        ebs: z
          .object({
            encrypted: z.boolean().nullish(),
            volumeSize: z.number().int().nonnegative().nullish(),
            volumeType: z.string().nullish(),
            iops: z.number().int().nonnegative().nullish(),
            throughputMib: z.number().int().nonnegative().nullish(),
            kmsKey: z.object({ id: z.string().nullish(), arn: z.string().nullish() }).nullish(),
          })
          .nullish(),
      }),
    )
    .nullish(),
  userDataSecret: z.object({ name: z.string().optional() }).nullish(),
  tags: z.array(z.object({ name: z.string().min(1), value: z.string() })).optional(),
  placement: z
    .object({ region: z.string().optional(), availabilityZone: z.string().optional() })
    .optional(),
});

// Accelerated families: a worker-role MachineSet of these is a GPU pool, not the general one.
const ACCELERATED_INSTANCE_TYPE = /^(p|g|gr|inf|trn|dl|f|vt)\d+[a-z-]*\./;

/** An EC2 instance type with accelerators, as the worker selection asks. */
export const acceleratedInstanceType: AcceleratedMachineType = (providerSpec) => {
  const instanceType = (providerSpec as { instanceType?: unknown } | null | undefined)
    ?.instanceType;
  return typeof instanceType === 'string' && ACCELERATED_INSTANCE_TYPE.test(instanceType)
    ? `instance type ${instanceType}`
    : undefined;
};

/** The general-purpose worker MachineSets of an AWS cluster, first candidate first. */
export const selectWorkerMachineSet = (machineSets: unknown[]) =>
  selectOpenShiftWorker(machineSets, acceleratedInstanceType);

/** Reads the AWS providerSpec of the MachineSet chosen by selectWorkerMachineSet. */
export function parseWorkerMachineSet(
  machineSet: unknown,
): { ok: true; value: WorkerMachineSet } | DiscoveryFailure {
  const header = MachineSetHeader.safeParse(machineSet);
  if (!header.success) {
    return invalid('MachineSet', describeIssues(header.error, ''));
  }
  const name = header.data.metadata.name;
  const where = `MachineSet ${MACHINE_API_NAMESPACE}/${name}`;
  const providerSpec = header.data.spec?.template?.spec?.providerSpec?.value;
  if (providerSpec === undefined || providerSpec === null) {
    return invalid(where, `${PROVIDER_SPEC_PATH}: not set`);
  }
  const parsed = AWSMachineProviderConfig.safeParse(providerSpec);
  if (!parsed.success) return invalid(where, describeIssues(parsed.error, PROVIDER_SPEC_PATH));
  const spec = parsed.data;
  // The NodeClass pins the AMI by id (amiSelectorTerms[].id, the enforced field) and names the
  // instance profile (EC2NodeClass.spec.instanceProfile takes a name): a set that gives either
  // only by ARN or filters cannot be copied as it is.
  const byWhat = (ref: ResourceReference) =>
    ref.arn ? `ARN ${ref.arn}` : ref.filters?.length ? 'filters' : 'nothing';
  if (!spec.ami.id) {
    return invalid(
      where,
      `${PROVIDER_SPEC_PATH}.ami: given by ${byWhat(spec.ami)}, not by id; the NodeClass pins the worker AMI by id`,
    );
  }
  if (!spec.iamInstanceProfile.id) {
    return invalid(
      where,
      `${PROVIDER_SPEC_PATH}.iamInstanceProfile: given by ${byWhat(spec.iamInstanceProfile)}, not by id; EC2NodeClass.spec.instanceProfile takes the profile's name`,
    );
  }

  const securityGroups: WorkerMachineSet['securityGroups'] = [];
  for (const [index, ref] of spec.securityGroups.entries()) {
    const resolved = referenceTo(ref);
    if (resolved.length === 0) {
      return invalid(
        where,
        `${PROVIDER_SPEC_PATH}.securityGroups[${index}]: needs an id or a filter named tag:Name with values`,
      );
    }
    securityGroups.push(...resolved);
  }
  let subnet: WorkerMachineSet['subnet'];
  if (spec.subnet !== undefined) {
    subnet = referenceTo(spec.subnet)[0];
    if (subnet === undefined) {
      return invalid(
        where,
        `${PROVIDER_SPEC_PATH}.subnet: needs an id or a filter named tag:Name with values`,
      );
    }
  }

  const volumes = blockDeviceVolumes(spec.blockDevices ?? []);
  if (!volumes.ok) return invalid(where, volumes.message);
  return {
    ok: true,
    value: {
      name,
      providerSpecAPIVersion: spec.apiVersion,
      amiID: spec.ami.id,
      instanceProfile: spec.iamInstanceProfile.id,
      instanceType: spec.instanceType,
      securityGroups,
      subnet,
      ...(volumes.rootVolume ? { rootVolume: volumes.rootVolume } : {}),
      dataVolumes: volumes.dataVolumes,
      userDataSecretName: spec.userDataSecret?.name || DEFAULT_USER_DATA_SECRET,
      tags: Object.fromEntries((spec.tags ?? []).map((t) => [t.name, t.value])),
      ...(spec.placement?.region ? { region: spec.placement.region } : {}),
      ...(spec.placement?.availabilityZone
        ? { availabilityZone: spec.placement.availabilityZone }
        : {}),
    },
  };
}

type BlockDevices = NonNullable<z.infer<typeof AWSMachineProviderConfig>['blockDevices']>;

/**
 * The volumes machine-api-provider-aws would launch (pkg/actuators/machine/instances.go,
 * getBlockDeviceMappings): entries without `ebs` are skipped; the one without a `deviceName` is
 * the root volume (named after the AMI's RootDeviceName), a second one is an error there ("non
 * root device must have name"); iops counts only for io1/io2/gp3 and throughput only for gp3,
 * each only above 0; the KMS key id wins over its ARN. Absent fields stay absent: the provider
 * does not send them and EC2 decides, so the NodeClass must not invent a value either.
 */
function blockDeviceVolumes(
  devices: BlockDevices,
):
  | { ok: true; rootVolume?: EbsVolume; dataVolumes: WorkerMachineSet['dataVolumes'] }
  | { ok: false; message: string } {
  let rootVolume: EbsVolume | undefined;
  const dataVolumes: WorkerMachineSet['dataVolumes'] = [];
  for (const [index, device] of devices.entries()) {
    const ebs = device.ebs;
    if (!ebs) continue;
    const type = ebs.volumeType || undefined;
    const volume: EbsVolume = {
      ...(ebs.volumeSize ? { volumeSize: ebs.volumeSize } : {}),
      ...(type ? { volumeType: type } : {}),
      ...(typeof ebs.encrypted === 'boolean' ? { encrypted: ebs.encrypted } : {}),
      ...(ebs.iops && (type === 'io1' || type === 'io2' || type === 'gp3')
        ? { iops: ebs.iops }
        : {}),
      ...(ebs.throughputMib && type === 'gp3' ? { throughputMiB: ebs.throughputMib } : {}),
      ...(ebs.kmsKey?.id || ebs.kmsKey?.arn
        ? { kmsKeyID: (ebs.kmsKey.id || ebs.kmsKey.arn) as string }
        : {}),
    };
    if (device.deviceName) {
      dataVolumes.push({ deviceName: device.deviceName, ...volume });
      continue;
    }
    if (rootVolume !== undefined) {
      return {
        ok: false,
        message: `${PROVIDER_SPEC_PATH}.blockDevices[${index}]: a second block device without deviceName; only the root volume may omit it (machine-api-provider-aws refuses this MachineSet too)`,
      };
    }
    rootVolume = volume;
  }
  return { ok: true, ...(rootVolume ? { rootVolume } : {}), dataVolumes };
}

/** An id wins over filters; each value of a tag:Name filter names one resource. */
function referenceTo(ref: ResourceReference): ({ id: string } | { name: string })[] {
  if (ref.id) return [{ id: ref.id }];
  const names = (ref.filters ?? [])
    .filter((f) => f.name === 'tag:Name')
    .flatMap((f) => f.values ?? [])
    .filter((v) => v !== '');
  return names.map((name) => ({ name }));
}

function invalid(where: string, detail: string): DiscoveryFailure {
  return { ok: false, reason: 'InvalidWorkerMachineSet', message: `${where}: ${detail}` };
}
