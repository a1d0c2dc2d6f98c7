import {
  DescribeInstanceTypesCommand,
  type _InstanceType,
  type EC2Client,
} from '@aws-sdk/client-ec2';
import type { InstanceCapacity } from '../infrastructure.js';

/** GPU manufacturers' Kubernetes extended resources (their device plugins). */
const GPU_RESOURCE: Record<string, string> = {
  NVIDIA: 'nvidia.com/gpu',
  AMD: 'amd.com/gpu',
};

/**
 * Capacities from EC2 DescribeInstanceTypes; an unknown name is refused with EC2's own message
 * (InvalidInstanceType lists every unknown one).
 */
export async function describeInstanceTypeCapacities(
  ec2: EC2Client,
  instanceTypes: readonly string[],
): Promise<{ ok: true; capacities: InstanceCapacity[] } | { ok: false; message: string }> {
  if (instanceTypes.length === 0) return { ok: true, capacities: [] };
  let described;
  try {
    // At most 100 names per call; a fleet allows a handful.
    described =
      (
        await ec2.send(
          new DescribeInstanceTypesCommand({
            InstanceTypes: [...instanceTypes] as _InstanceType[],
          }),
        )
      ).InstanceTypes ?? [];
  } catch (err) {
    const e = err as { name?: string; message?: string };
    return {
      ok: false,
      message: `EC2 DescribeInstanceTypes: ${e.name ?? 'Error'}: ${e.message ?? String(err)}`,
    };
  }
  const capacities: InstanceCapacity[] = [];
  for (const name of instanceTypes) {
    const t = described.find((d) => d.InstanceType === name);
    const vCpus = t?.VCpuInfo?.DefaultVCpus;
    const memoryMiB = t?.MemoryInfo?.SizeInMiB;
    if (!t || vCpus === undefined || memoryMiB === undefined)
      return { ok: false, message: `EC2 DescribeInstanceTypes did not describe ${name}` };
    const archs = t.ProcessorInfo?.SupportedArchitectures ?? [];
    const gpus = t.GpuInfo?.Gpus ?? [];
    const gpuCount = gpus.reduce((n, g) => n + (g.Count ?? 0), 0);
    const resourceName = GPU_RESOURCE[gpus[0]?.Manufacturer ?? ''];
    capacities.push({
      instanceType: name,
      vCpus,
      memoryMiB,
      architecture: archs.includes('arm64') && !archs.includes('x86_64') ? 'arm64' : 'amd64',
      ...(gpuCount > 0 && resourceName ? { gpu: { count: gpuCount, resourceName } } : {}),
    });
  }
  return { ok: true, capacities };
}
