import { clone, loadCrdSchema } from '@fleet/crd-schema';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

/**
 * What a kube-apiserver with `fieldValidation=Strict` would say about an object, using the
 * product's own engine (@fleet/crd-schema): schema and CEL causes as `<field>: <message>`, and
 * every field the schema does not declare. `skippedRules` lists the CEL rules the engine could
 * not compile, so a test can insist that the rules it relies on were evaluated.
 */
export interface CrdValidationResult {
  valid: boolean;
  errors: string[];
  skippedRules: string[];
}

export interface CrdValidator {
  readonly group: string;
  readonly kind: string;
  validate(object: unknown): CrdValidationResult;
}

export function loadCrdValidator(crdFile: string, version?: string): CrdValidator {
  const schema = loadCrdSchema(crdFile, version);
  const crd = parse(readFileSync(crdFile, 'utf8')) as {
    spec: { group: string; names: { kind: string } };
  };
  const skippedRules = schema.compileFailures.map((f) => `${f.path}: ${f.rule}`);
  return {
    group: crd.spec.group,
    kind: crd.spec.names.kind,
    validate(object: unknown): CrdValidationResult {
      const candidate = clone(object) as Record<string, unknown>;
      const unknown = schema.prune(candidate);
      const errors = [
        ...unknown.map((field) => `${field}: unknown field "${field}"`),
        ...schema.validate(candidate).map((c) => `${c.field || '<root>'}: ${c.message}`),
      ];
      return { valid: errors.length === 0, errors, skippedRules };
    },
  };
}
