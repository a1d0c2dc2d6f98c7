import type { GroupCapacity } from '../migration.js';

/**
 * vCPUs and memory of common EC2 instance types, as AWS documents them ("Amazon EC2 instance
 * types", docs.aws.amazon.com/ec2/latest/instancetypes: general purpose, compute optimized,
 * memory optimized, accelerated computing). Only for the migration proposal's `limits`, which
 * must be computed without a cloud call (it is recomputed from watches at rest); a type not
 * listed here leaves cpu and memory to the Cluster Autoscaler's own resource limits, and the
 * proposal says so.
 */
const SIZES: Record<string, number> = {
  large: 2,
  xlarge: 4,
  '2xlarge': 8,
  '4xlarge': 16,
  '8xlarge': 32,
  '12xlarge': 48,
  '16xlarge': 64,
  '24xlarge': 96,
};
/** GiB of memory per vCPU of each family (m: 4, c: 2, r: 8). */
const FAMILIES: Record<string, number> = {
  m5: 4,
  m5a: 4,
  m6i: 4,
  m6a: 4,
  m7i: 4,
  m7a: 4,
  c5: 2,
  c5a: 2,
  c6i: 2,
  c6a: 2,
  c7i: 2,
  r5: 8,
  r5a: 8,
  r6i: 8,
  r6a: 8,
  r7i: 8,
};
const NVIDIA = 'nvidia.com/gpu';
const ACCELERATED: Record<string, GroupCapacity> = {
  'g4dn.xlarge': { vCpus: 4, memoryGiB: 16, gpu: { resourceName: NVIDIA, count: 1 } },
  'g4dn.2xlarge': { vCpus: 8, memoryGiB: 32, gpu: { resourceName: NVIDIA, count: 1 } },
  'g4dn.4xlarge': { vCpus: 16, memoryGiB: 64, gpu: { resourceName: NVIDIA, count: 1 } },
  'g4dn.8xlarge': { vCpus: 32, memoryGiB: 128, gpu: { resourceName: NVIDIA, count: 1 } },
  'g4dn.12xlarge': { vCpus: 48, memoryGiB: 192, gpu: { resourceName: NVIDIA, count: 4 } },
  'g5.xlarge': { vCpus: 4, memoryGiB: 16, gpu: { resourceName: NVIDIA, count: 1 } },
  'g5.2xlarge': { vCpus: 8, memoryGiB: 32, gpu: { resourceName: NVIDIA, count: 1 } },
  'g5.4xlarge': { vCpus: 16, memoryGiB: 64, gpu: { resourceName: NVIDIA, count: 1 } },
  'g5.8xlarge': { vCpus: 32, memoryGiB: 128, gpu: { resourceName: NVIDIA, count: 1 } },
  'g5.12xlarge': { vCpus: 48, memoryGiB: 192, gpu: { resourceName: NVIDIA, count: 4 } },
  'g5.48xlarge': { vCpus: 192, memoryGiB: 768, gpu: { resourceName: NVIDIA, count: 8 } },
  'p3.2xlarge': { vCpus: 8, memoryGiB: 61, gpu: { resourceName: NVIDIA, count: 1 } },
  'p3.8xlarge': { vCpus: 32, memoryGiB: 244, gpu: { resourceName: NVIDIA, count: 4 } },
  'p3.16xlarge': { vCpus: 64, memoryGiB: 488, gpu: { resourceName: NVIDIA, count: 8 } },
};

export function ec2InstanceCapacity(instanceType: string): GroupCapacity | undefined {
  const known = ACCELERATED[instanceType];
  if (known) return known;
  const [family, size] = instanceType.split('.');
  const perVcpu = FAMILIES[family ?? ''];
  const vCpus = SIZES[size ?? ''];
  return perVcpu !== undefined && vCpus !== undefined
    ? { vCpus, memoryGiB: vCpus * perVcpu }
    : undefined;
}
