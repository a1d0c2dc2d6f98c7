#!/usr/bin/env node
// Refreshes the upstream CRDs of one source from a checkout of its repository:
//   node scripts/refresh-crds.mjs <source> <checkout> [--ref <tag or commit>] [--into <dir>]
// <source> names libs/crd-schema/upstream/sources/<source>.yaml. Each file listed there is looked
// up in the checkout by CRD name (metadata.name) under the source's `paths`; where upstream ships
// one variant per OpenShift feature set, the variant with the feature set of the copy held here is
// taken. Files are copied byte for byte and the provenance (ref, sha256) is rewritten. The ref is
// --ref, else the checkout's `git describe --tags --always`.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, parseDocument } from 'yaml';

const FEATURE_SET = 'release.openshift.io/feature-set';
const SKIPPED_DIRECTORIES = new Set(['.git', 'vendor', 'node_modules', 'hack', 'test', 'tests']);

function usage(message) {
  console.error(`refresh-crds: ${message}`);
  console.error(
    'usage: node scripts/refresh-crds.mjs <source> <checkout> [--ref <tag or commit>] [--into <dir>]',
  );
  process.exit(2);
}

function parseArguments(argv) {
  const positional = [];
  const options = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--ref' || arg === '--into') {
      const value = argv[++i];
      if (!value) usage(`${arg} needs a value`);
      options[arg.slice(2)] = value;
    } else if (arg.startsWith('--')) usage(`unknown option ${arg}`);
    else positional.push(arg);
  }
  if (positional.length !== 2) usage('expected <source> and <checkout>');
  return { source: positional[0], checkout: positional[1], ...options };
}

const sha256 = (path) => createHash('sha256').update(readFileSync(path)).digest('hex');

/** Every CRD document in the YAML files under `root`, as {name, featureSet, path}. */
function* upstreamCrds(root) {
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    const path = join(root, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRECTORIES.has(entry.name)) yield* upstreamCrds(path);
      continue;
    }
    if (!/\.ya?ml$/.test(entry.name)) continue;
    const docs = parseAllDocuments(readFileSync(path, 'utf8')).filter((d) => d.contents !== null);
    // A file holding several documents is a bundle, not a CRD file that can be copied unmodified.
    if (docs.length !== 1) continue;
    const object = docs[0].toJS();
    if (object?.kind !== 'CustomResourceDefinition') continue;
    yield {
      name: object.metadata?.name,
      featureSet: object.metadata?.annotations?.[FEATURE_SET],
      path,
    };
  }
}

const featureSetOf = (path) =>
  existsSync(path)
    ? parseDocument(readFileSync(path, 'utf8')).toJS()?.metadata?.annotations?.[FEATURE_SET]
    : undefined;

function refresh({ source, checkout, ref, into }) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const upstream = into ?? join(root, 'libs/crd-schema/upstream');
  const provenancePath = join(upstream, 'sources', `${source}.yaml`);
  if (!existsSync(provenancePath)) usage(`no provenance file ${provenancePath}`);
  if (!existsSync(checkout)) usage(`no checkout at ${checkout}`);
  const provenance = parseDocument(readFileSync(provenancePath, 'utf8'));
  const paths = provenance.get('paths')?.toJSON() ?? ['.'];
  const candidates = paths.flatMap((p) => [...upstreamCrds(join(checkout, p))]);

  const newRef =
    ref ??
    execFileSync('git', ['-C', checkout, 'describe', '--tags', '--always'], {
      encoding: 'utf8',
    }).trim();
  const files = provenance.get('files');
  const problems = [];
  const copies = [];
  for (const item of files.items) {
    const crd = item.get('crd');
    const target = join(upstream, item.get('file'));
    const featureSet = featureSetOf(target);
    const matches = candidates.filter(
      (c) =>
        c.name === crd &&
        (featureSet === undefined || (c.featureSet ?? '').split(',').includes(featureSet)),
    );
    const distinct = [...new Map(matches.map((m) => [sha256(m.path), m])).values()];
    if (distinct.length !== 1) {
      problems.push(
        distinct.length === 0
          ? `${crd}: not found under ${paths.join(', ')}`
          : `${crd}: ${distinct.length} different candidates: ${distinct.map((m) => relative(checkout, m.path)).join(', ')}`,
      );
      continue;
    }
    copies.push({ item, from: distinct[0].path, target });
  }
  // Nothing is copied unless every file was found, so a failed refresh leaves the tree as it was.
  if (problems.length > 0) {
    console.error(`refresh-crds: ${source} not refreshed:\n  ${problems.join('\n  ')}`);
    process.exit(1);
  }
  for (const { item, from, target } of copies) {
    copyFileSync(from, target);
    item.set('sha256', sha256(target));
    item.delete('ref');
    console.log(`${relative(upstream, target)} ← ${relative(checkout, from)}`);
  }
  provenance.set('ref', newRef);
  writeFileSync(provenancePath, provenance.toString());
  console.log(`${source} at ${newRef}`);
}

refresh(parseArguments(process.argv.slice(2)));
