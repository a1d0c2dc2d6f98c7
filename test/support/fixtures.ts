import { UPSTREAM_CRD_DIRECTORY } from '@fleet/crd-schema';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** test/fixtures, from this module's location (the build copies it into dist/test/fixtures). */
export const FIXTURES_DIR = fileURLToPath(new URL('../fixtures/', import.meta.url));
export const CRDS_DIR = UPSTREAM_CRD_DIRECTORY;
/**
 * A subset of the cloud-credential-operator's CredentialsRequest CRD, for the emulated clusters.
 * Real clusters already have the full CRD; applying this subset over it would replace its schema,
 * so no provider installs it.
 */
export const CREDENTIALS_REQUEST_CRD_PATH = join(
  FIXTURES_DIR,
  'crds',
  'cloudcredential.openshift.io_credentialsrequests.yaml',
);
export const fixtureClusterDir = (name: string): string => join(FIXTURES_DIR, 'clusters', name);

/**
 * Directories of other copies of CRDs the main directories hold (same names, another release or
 * a fork's): a cluster has one of them installed, the default until a test installs another.
 */
const ALTERNATIVE_CRD_DIRECTORIES = new Set([
  'sources',
  'karpenter-releases',
  // What HyperShift installs in a guest cluster (test/support/hcp-aws-hosted.ts).
  'hypershift-guest',
  // HyperShift builds before OpenshiftEC2NodeClass v1 (test/support/hcp-aws-hosted.ts).
  'hypershift-guest-v1beta1',
  // The Azure fork's karpenter.sh CRDs (the Azure driver installs them).
  'karpenter-azure-openshift-pr6',
]);

/** Every upstream CRD file the project ships once, in a stable order. */
export function fixtureCrdFiles(): string[] {
  return readdirSync(CRDS_DIR, { withFileTypes: true })
    .filter((d) => d.isDirectory() && !ALTERNATIVE_CRD_DIRECTORIES.has(d.name))
    .flatMap((d) =>
      readdirSync(join(CRDS_DIR, d.name))
        .filter((f) => f.endsWith('.yaml'))
        .map((f) => join(CRDS_DIR, d.name, f)),
    )
    .sort();
}
