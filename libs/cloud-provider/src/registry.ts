import type { Platform, Topology } from '@fleet/contracts';
import { AWS_STANDALONE_DRIVER } from './aws/driver.js';
import { AZURE_STANDALONE_DRIVER } from './azure/driver.js';
import { CLUSTER_API_DRIVER } from './cluster-api/driver.js';
import type { DriverRegistration } from './driver.js';
import { AWS_HOSTED_DRIVER } from './hosted/driver.js';

/**
 * Every platform and topology the fleet can run. The API refuses to register any other pair,
 * and a sidecar handed one anyway reports UnsupportedPlatform and writes nothing. A new driver
 * is one entry here (and one fixture in the conformance test, which runs every entry).
 */
export const DRIVER_REGISTRY: readonly DriverRegistration[] = [
  AWS_STANDALONE_DRIVER,
  CLUSTER_API_DRIVER,
  AWS_HOSTED_DRIVER,
  AZURE_STANDALONE_DRIVER,
];

export function findDriver(platform: Platform, topology: Topology): DriverRegistration | undefined {
  return DRIVER_REGISTRY.find((d) => d.platform === platform && d.topology === topology);
}

/** `AWS/STANDALONE, …`, for error messages. */
export function supportedPairs(): string {
  return DRIVER_REGISTRY.map((d) => `${d.platform}/${d.topology}`).join(', ');
}
