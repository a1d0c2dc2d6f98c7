import type { Platform, Topology } from '@fleet/contracts';
import { AWS_STANDALONE } from './aws/registration.js';
import { AZURE_STANDALONE } from './azure/registration.js';
import { CLUSTER_API } from './cluster-api/registration.js';
import type { RegisteredDriver } from './driver.js';
import { AWS_HOSTED } from './hosted/registration.js';

/**
 * Every platform and topology the fleet can run. The API refuses to register any other pair,
 * and a sidecar handed one anyway reports UnsupportedPlatform and writes nothing. A new driver
 * is one entry here (and one fixture in the conformance test, which runs every entry). Each
 * entry's driver module is imported only by its `load()`: a sidecar runs one driver, and each
 * brings its cloud's SDK (docs/PERFORMANCE.md, sidecar memory).
 */
export const DRIVER_REGISTRY: readonly RegisteredDriver[] = [
  { ...AWS_STANDALONE, load: () => import('./aws/driver.js').then((m) => m.AWS_STANDALONE_DRIVER) },
  {
    ...CLUSTER_API,
    load: () => import('./cluster-api/driver.js').then((m) => m.CLUSTER_API_DRIVER),
  },
  { ...AWS_HOSTED, load: () => import('./hosted/driver.js').then((m) => m.AWS_HOSTED_DRIVER) },
  {
    ...AZURE_STANDALONE,
    load: () => import('./azure/driver.js').then((m) => m.AZURE_STANDALONE_DRIVER),
  },
];

export function findDriver(platform: Platform, topology: Topology): RegisteredDriver | undefined {
  return DRIVER_REGISTRY.find((d) => d.platform === platform && d.topology === topology);
}

/** `AWS/STANDALONE, …`, for error messages. */
export function supportedPairs(): string {
  return DRIVER_REGISTRY.map((d) => `${d.platform}/${d.topology}`).join(', ');
}
