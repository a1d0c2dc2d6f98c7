import { describeError } from './describe-error.js';
import type { DiscoveryFailure } from './types.js';

/**
 * Thrown inside a discovery to stop at the first missing piece; each discovery's entry point
 * turns it back into its failure, so it never escapes.
 */
export class Stop extends Error {
  constructor(readonly failure: DiscoveryFailure) {
    super(failure.message);
  }
}

export function fail(reason: DiscoveryFailure['reason'], message: string): never {
  throw new Stop({ ok: false, reason, message });
}

/** A read of the cluster whose failure stops discovery as `KubernetesLookupFailed`. */
export async function readCluster<T>(what: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    fail('KubernetesLookupFailed', `reading ${what} failed: ${describeError(err)}`);
  }
}
