import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';

import { DEFAULT_CLUSTER_API_KARPENTER_IMAGE } from '@fleet/cloud-provider';
import {
  DEFAULT_KARPENTER_VERSION,
  KARPENTER_RELEASES,
  KARPENTER_VERSIONS,
} from '@fleet/contracts';
import { UPSTREAM_CRD_DIRECTORY } from '@fleet/crd-schema';

import { upstreamReleases } from '../support/upstream-binaries.js';

// test/upstream/versions.json is the one list of pinned upstream releases: the Go modules that
// build upstream binaries, the vendored CRDs' provenance and the product's defaults must agree
// with it, so that moving a version is one edit (and a refresh) rather than a hunt.

const upstreamDir = fileURLToPath(new URL('.', import.meta.url));
const releases = upstreamReleases();
const withBinaries = Object.entries(releases).filter(([, r]) => r.binaries);
const bare = (v: string): string => v.replace(/^v/, '');

/** `directive (...)` blocks and single-line `directive x` of a go.mod, comments dropped. */
function goModLines(goMod: string, directive: string): string[] {
  const lines: string[] = [];
  let inBlock = false;
  for (const raw of goMod.split('\n')) {
    const line = raw.replace(/\/\/.*$/, '').trim();
    if (inBlock) {
      if (line === ')') inBlock = false;
      else if (line) lines.push(line);
    } else if (line === `${directive} (`) inBlock = true;
    else if (line.startsWith(`${directive} `)) lines.push(line.slice(directive.length + 1));
  }
  return lines;
}

describe('test/upstream/versions.json', () => {
  it('has a Go module under test/upstream/<name> for every entry with binaries, and no other', () => {
    const modules = readdirSync(upstreamDir, { withFileTypes: true })
      .filter((d) => d.isDirectory() && existsSync(join(upstreamDir, d.name, 'go.mod')))
      .map((d) => d.name)
      .sort();
    expect(modules).toEqual(withBinaries.map(([name]) => name).sort());
  });

  describe.each(withBinaries)('%s: its go.mod', (name, release) => {
    const goMod = readFileSync(join(upstreamDir, name, 'go.mod'), 'utf8');

    it('requires the pinned module at the pinned version', () => {
      expect(goModLines(goMod, 'require')).toContain(`${release.module} ${release.version}`);
    });

    it('names each binary as a tool, and nothing else', () => {
      expect(goModLines(goMod, 'tool').sort()).toEqual(Object.values(release.binaries!).sort());
    });

    it('replaces what upstream replaces by a local path with the published module at its stagingVersion', () => {
      const replaces = goModLines(goMod, 'replace');
      for (const replace of replaces) {
        const [from, to] = replace.split('=>').map((s) => s.trim());
        expect(to).not.toMatch(/^\.\.?\//);
        const sameCommit = release.sameCommitTags?.[from!];
        if (sameCommit) expect(to).toBe(`${from} ${sameCommit.version}`);
        else if (release.stagingVersion && to!.startsWith(`${from} `)) {
          expect(to).toBe(`${from} ${release.stagingVersion}`);
        }
      }
      // A same-commit tag names the commit it stands for, and why the pseudo-version is not used.
      for (const tag of Object.values(release.sameCommitTags ?? {}))
        expect(tag).toEqual({
          version: expect.stringMatching(/^v\d+\.\d+\.\d+$/),
          commit: expect.stringMatching(/^[0-9a-f]{40}$/),
          why: expect.any(String),
        });
      if (release.module === 'k8s.io/kubernetes') {
        // k8s.io/kubernetes replaces its 31 staging modules; a new one upstream adds shows here.
        expect(replaces.length).toBeGreaterThanOrEqual(31);
        const [, minor, patch] = bare(release.version!).split('.');
        expect(release.stagingVersion).toBe(`v0.${minor}.${patch}`);
      }
    });

    it('has a go.sum', () => {
      expect(readFileSync(join(upstreamDir, name, 'go.sum'), 'utf8')).toContain(
        `${release.module} ${release.version} h1:`,
      );
    });
  });

  it('lists every repository the vendored CRDs come from, at the refs they were copied at', () => {
    const sourcesDir = join(UPSTREAM_CRD_DIRECTORY, 'sources');
    const used = new Map<string, Set<string>>();
    for (const file of readdirSync(sourcesDir).filter((f) => f.endsWith('.yaml'))) {
      const source = parse(readFileSync(join(sourcesDir, file), 'utf8')) as {
        repository: string;
        ref: string;
        files: { file: string; ref?: string }[];
      };
      const entry = Object.values(releases).find((r) => r.repository === source.repository);
      expect({ file, repository: entry?.repository }).toEqual({
        file,
        repository: source.repository,
      });
      const refs = new Set([source.ref, ...source.files.flatMap((f) => (f.ref ? [f.ref] : []))]);
      for (const ref of refs) {
        expect({ file, ref, listed: entry!.crdRefs ?? [] }).toEqual({
          file,
          ref,
          listed: expect.arrayContaining([ref]),
        });
        used.set(source.repository, (used.get(source.repository) ?? new Set()).add(ref));
      }
    }
    // No ref is listed that no vendored file was copied at.
    for (const release of Object.values(releases)) {
      expect([...(used.get(release.repository) ?? [])].sort()).toEqual(
        [...(release.crdRefs ?? [])].sort(),
      );
    }
  });

  it("names the product's Karpenter releases: the default, the earlier ones, their images and CRDs", () => {
    const aws = releases['karpenter-provider-aws']!;
    expect(DEFAULT_KARPENTER_VERSION).toBe(bare(aws.version!));
    expect([...KARPENTER_VERSIONS].sort()).toEqual(
      [aws.version!, ...(aws.earlierReleases ?? [])].map(bare).sort(),
    );
    for (const version of KARPENTER_VERSIONS) {
      expect(KARPENTER_RELEASES[version].image).toBe(aws.images?.[`v${version}`]);
    }
    for (const earlier of aws.earlierReleases ?? []) {
      expect(existsSync(join(UPSTREAM_CRD_DIRECTORY, 'karpenter-releases', earlier))).toBe(true);
    }
  });

  it("names karpenter-provider-cluster-api's default image", () => {
    expect(DEFAULT_CLUSTER_API_KARPENTER_IMAGE).toBe(
      releases['karpenter-provider-cluster-api']!.image,
    );
  });
});
