import { accessSync, constants, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Pinned upstream binaries built by the set-up from test/upstream/<name>/go.mod and linked at
 * test/upstream/.bin/<binary> (scripts/upstream-binaries.mjs). Tests use these, never whatever
 * the machine's PATH holds.
 */
export function upstreamBinary(name: string): string {
  const path = fileURLToPath(new URL(`../upstream/.bin/${name}`, import.meta.url));
  try {
    accessSync(path, constants.X_OK);
  } catch {
    throw new Error(
      `${name} is not built at ${path}: \`npm test\` builds it in its set-up, or run \`node scripts/upstream-binaries.mjs ${name}\``,
    );
  }
  return path;
}

export interface UpstreamRelease {
  repository: string;
  module?: string;
  version?: string;
  stagingVersion?: string;
  binaries?: Record<string, string>;
  /**
   * Modules upstream requires at a pseudo-version the module proxy refuses, replaced by the
   * served tag of the same commit.
   */
  sameCommitTags?: Record<string, { version: string; commit: string; why: string }>;
  earlierReleases?: string[];
  image?: string;
  /** release (with its v) → image by digest */
  images?: Record<string, string>;
  crdRefs?: string[];
}

/** test/upstream/versions.json: the one list of pinned upstream releases. */
export function upstreamReleases(): Record<string, UpstreamRelease> {
  const file = fileURLToPath(new URL('../upstream/versions.json', import.meta.url));
  return (JSON.parse(readFileSync(file, 'utf8')) as { upstreams: Record<string, UpstreamRelease> })
    .upstreams;
}
