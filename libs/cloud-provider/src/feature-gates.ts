import type { FeatureGates } from '@fleet/contracts';

/** `A=true,B=false`, sorted by gate name so the Deployment does not roll on key order. */
export function renderFeatureGates(gates: FeatureGates): string {
  return Object.keys(gates)
    .sort()
    .map((name) => `${name}=${String(gates[name])}`)
    .join(',');
}
