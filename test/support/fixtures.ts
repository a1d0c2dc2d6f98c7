import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** shared/fixtures, beside the project (tests run from the repository root). */
export const FIXTURES_DIR =
  process.env.FLEET_FIXTURES_DIR ?? join(process.cwd(), '..', 'shared', 'fixtures');
export const CRDS_DIR = join(FIXTURES_DIR, 'crds');
export const fixtureClusterDir = (name: string): string => join(FIXTURES_DIR, 'clusters', name);

/** Every CRD file of the fixtures, in a stable order. */
export function fixtureCrdFiles(): string[] {
  return readdirSync(CRDS_DIR, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) =>
      readdirSync(join(CRDS_DIR, d.name))
        .filter((f) => f.endsWith('.yaml'))
        .map((f) => join(CRDS_DIR, d.name, f)),
    )
    .sort();
}
