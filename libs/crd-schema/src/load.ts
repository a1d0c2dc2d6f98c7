import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { StructuralSchema } from './schema.js';

interface CrdDocument {
  metadata: { name: string };
  spec: {
    versions: {
      name: string;
      storage?: boolean;
      schema?: { openAPIV3Schema?: ConstructorParameters<typeof StructuralSchema>[0] };
    }[];
  };
}

/**
 * Compiles one served version of a CustomResourceDefinition file into a validator; without a
 * version, the storage version (the one every other version converts to).
 */
export function loadCrdSchema(path: string, version?: string): StructuralSchema {
  const crd = parse(readFileSync(path, 'utf8')) as CrdDocument;
  const served = crd.spec.versions.find((v) =>
    version === undefined ? v.storage === true : v.name === version,
  );
  const schema = served?.schema?.openAPIV3Schema;
  if (!schema) throw new Error(`${path}: no openAPIV3Schema for version ${version ?? '(storage)'}`);
  return new StructuralSchema(schema, crd.metadata.name);
}
