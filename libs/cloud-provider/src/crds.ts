import { readFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { isRecord } from './canonical.js';
import type { CustomResourceDefinitionSource, KubeObject, TargetedObject } from './types.js';

/**
 * Reads the CRD manifests a provider lists. The only I/O in this library, kept apart from
 * rendering: the sidecar calls it once at start-up with the directory its image ships the
 * upstream CRDs in (laid out like libs/crd-schema/upstream). A file that is not the CRD the source
 * names is an error, so a mispackaged image fails at start-up rather than installing junk.
 */
export async function loadCustomResourceDefinitions(
  sources: readonly CustomResourceDefinitionSource[],
  upstreamDirectory: string,
): Promise<TargetedObject[]> {
  return Promise.all(
    sources.map(async (source) => {
      const file =
        source.origin === 'bundled' || isAbsolute(source.path)
          ? source.path
          : join(upstreamDirectory, source.path);
      const docs = parseAllDocuments(await readFile(file, 'utf8')).filter(
        (doc) => doc.contents !== null,
      );
      const [doc] = docs;
      if (docs.length !== 1 || doc === undefined) {
        throw new Error(`${file}: expected exactly one YAML document, found ${docs.length}`);
      }
      const crd: unknown = doc.toJS();
      const { group, plural } = source.identity;
      const spec = isRecord(crd) && isRecord(crd.spec) ? crd.spec : undefined;
      const names = spec && isRecord(spec.names) ? spec.names : undefined;
      if (
        !isRecord(crd) ||
        crd.kind !== 'CustomResourceDefinition' ||
        spec?.group !== group ||
        names?.plural !== plural
      ) {
        throw new Error(`${file}: not the CustomResourceDefinition ${plural}.${group}`);
      }
      return { target: source.target, object: crd as KubeObject };
    }),
  );
}
