import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';

import { afterEach, describe, expect, it } from '@jest/globals';
import { parse, parseAllDocuments } from 'yaml';

import { UPSTREAM_CRD_DIRECTORY } from './upstream.js';

interface Provenance {
  repository: string;
  ref: string;
  paths: string[];
  licence: string;
  files: { crd: string; file: string; ref?: string; sha256: string }[];
}

const SOURCES = join(UPSTREAM_CRD_DIRECTORY, 'sources');
const REFRESH = new URL('../../../scripts/refresh-crds.mjs', import.meta.url).pathname;
const run = promisify(execFile);

const sha256 = (path: string): string =>
  createHash('sha256').update(readFileSync(path)).digest('hex');
const provenance = (dir: string, source: string): Provenance =>
  parse(readFileSync(join(dir, 'sources', `${source}.yaml`), 'utf8')) as Provenance;
const sources = (): string[] =>
  readdirSync(SOURCES)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => f.replace(/\.yaml$/, ''));

function crdFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.yaml'))
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .filter((f) => !f.startsWith('sources/'))
    .sort();
}

describe('upstream CRDs and their provenance', () => {
  it('lists every shipped CRD file exactly once, with repository, ref, paths and licence', () => {
    const listed = sources().flatMap((source) => {
      const p = provenance(UPSTREAM_CRD_DIRECTORY, source);
      expect(p.repository).toMatch(/^https:\/\/github\.com\/[\w.-]+\/[\w.-]+$/);
      expect(p.ref).toEqual(expect.any(String));
      expect(p.paths.length).toBeGreaterThan(0);
      expect(p.licence).toBe('Apache-2.0');
      return p.files.map((f) => f.file);
    });
    expect([...listed].sort()).toEqual(crdFiles(UPSTREAM_CRD_DIRECTORY));
    expect(new Set(listed).size).toBe(listed.length);
    expect(readFileSync(join(UPSTREAM_CRD_DIRECTORY, 'LICENSE-Apache-2.0'), 'utf8')).toContain(
      'Apache License',
    );
  });

  it.each(sources())('%s: each file is the CRD it names, unmodified (sha256)', (source) => {
    for (const f of provenance(UPSTREAM_CRD_DIRECTORY, source).files) {
      const path = join(UPSTREAM_CRD_DIRECTORY, f.file);
      const docs = parseAllDocuments(readFileSync(path, 'utf8'));
      expect(docs).toHaveLength(1);
      const crd = docs[0]?.toJS() as { kind: string; metadata: { name: string } };
      expect({ kind: crd.kind, name: crd.metadata.name }).toEqual({
        kind: 'CustomResourceDefinition',
        name: f.crd,
      });
      expect({ file: f.file, sha256: sha256(path) }).toEqual({ file: f.file, sha256: f.sha256 });
    }
  });
});

describe('scripts/refresh-crds.mjs', () => {
  let scratch: string | undefined;
  afterEach(() => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
    scratch = undefined;
  });

  /** A copy of the upstream directory and a fake checkout laid out as karpenter-provider-aws is. */
  function setUp(): { into: string; checkout: string } {
    scratch = mkdtempSync(join(tmpdir(), 'refresh-crds-'));
    const into = join(scratch, 'upstream');
    cpSync(UPSTREAM_CRD_DIRECTORY, into, { recursive: true });
    const checkout = join(scratch, 'checkout');
    const crds = join(checkout, 'pkg/apis/crds');
    cpSync(join(UPSTREAM_CRD_DIRECTORY, 'karpenter'), crds, { recursive: true });
    return { into, checkout };
  }

  it('copies each file found by CRD name and rewrites ref and sha256', async () => {
    const { into, checkout } = setUp();
    const nodePools = join(checkout, 'pkg/apis/crds/karpenter.sh_nodepools.yaml');
    // A newer upstream: same CRD, one more line, under another file name.
    const newer = `${readFileSync(nodePools, 'utf8')}# v1.15.0\n`;
    rmSync(nodePools);
    writeFileSync(join(checkout, 'pkg/apis/crds/nodepools.yaml'), newer);

    await run('node', [
      REFRESH,
      'karpenter-provider-aws',
      checkout,
      '--ref',
      'v1.15.0',
      '--into',
      into,
    ]);

    const p = provenance(into, 'karpenter-provider-aws');
    expect(p.ref).toBe('v1.15.0');
    const copied = join(into, 'karpenter/karpenter.sh_nodepools.yaml');
    expect(readFileSync(copied, 'utf8')).toBe(newer);
    expect(p.files.find((f) => f.crd === 'nodepools.karpenter.sh')?.sha256).toBe(sha256(copied));
    // The source's other files are unchanged, and so are other sources' provenance files.
    expect(p.files.find((f) => f.crd === 'nodeclaims.karpenter.sh')?.sha256).toBe(
      provenance(UPSTREAM_CRD_DIRECTORY, 'karpenter-provider-aws').files.find(
        (f) => f.crd === 'nodeclaims.karpenter.sh',
      )?.sha256,
    );
    expect(provenance(into, 'cluster-api')).toEqual(
      provenance(UPSTREAM_CRD_DIRECTORY, 'cluster-api'),
    );
  });

  it('copies nothing and exits non-zero when a CRD is missing upstream', async () => {
    const { into, checkout } = setUp();
    rmSync(join(checkout, 'pkg/apis/crds/karpenter.sh_nodeclaims.yaml'));
    writeFileSync(
      join(checkout, 'pkg/apis/crds/karpenter.sh_nodepools.yaml'),
      `${readFileSync(join(checkout, 'pkg/apis/crds/karpenter.sh_nodepools.yaml'), 'utf8')}# x\n`,
    );
    const before = readFileSync(join(into, 'karpenter/karpenter.sh_nodepools.yaml'), 'utf8');

    const failure = await run('node', [
      REFRESH,
      'karpenter-provider-aws',
      checkout,
      '--ref',
      'v9',
      '--into',
      into,
    ]).then(
      () => undefined,
      (err: { code: number; stderr: string }) => err,
    );

    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain('nodeclaims.karpenter.sh: not found under pkg/apis/crds');
    expect(readFileSync(join(into, 'karpenter/karpenter.sh_nodepools.yaml'), 'utf8')).toBe(before);
    expect(provenance(into, 'karpenter-provider-aws').ref).toBe('v1.14.1');
  });
});
