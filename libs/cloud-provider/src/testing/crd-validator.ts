import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { evaluate } from '@marcbachmann/cel-js';
import { parse } from 'yaml';
import { isRecord } from '../canonical.js';

/**
 * Test-only: validates objects against a real CRD's openAPIV3Schema the way an API server with
 * `fieldValidation=Strict` would — types, enums, patterns, required fields, unknown fields —
 * and evaluates the CEL rules (x-kubernetes-validations) that do not compare with oldSelf.
 * Rules the CEL library cannot evaluate (Kubernetes extensions such as `find`) are skipped and
 * listed, never silently counted as passing.
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

type Schema = Record<string, unknown>;

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const addFormats = (addFormatsModule as unknown as { default: (ajv: Ajv) => Ajv }).default;

/** Adds additionalProperties:false where the API server would prune (or, strictly, reject). */
function strictify(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(strictify);
  if (!isRecord(schema)) return schema;
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    out[key] =
      key === 'properties' && isRecord(value)
        ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, strictify(v)]))
        : strictify(value);
  }
  if (
    isRecord(schema.properties) &&
    schema.additionalProperties === undefined &&
    schema['x-kubernetes-preserve-unknown-fields'] !== true
  ) {
    out.additionalProperties = false;
  }
  return out;
}

function celErrors(schema: unknown, value: unknown, path: string, result: CrdValidationResult) {
  if (!isRecord(schema) || value === undefined || value === null) return;
  const rules = schema['x-kubernetes-validations'];
  if (Array.isArray(rules)) {
    for (const rule of rules) {
      if (!isRecord(rule) || typeof rule.rule !== 'string' || rule.rule.includes('oldSelf'))
        continue;
      try {
        if (evaluate(rule.rule, { self: value }) !== true) {
          const message = typeof rule.message === 'string' ? rule.message : rule.rule;
          result.errors.push(`${path || '<root>'}: ${message}`);
        }
      } catch {
        result.skippedRules.push(`${path || '<root>'}: ${rule.rule}`);
      }
    }
  }
  if (isRecord(value)) {
    const properties = isRecord(schema.properties) ? schema.properties : {};
    for (const [key, child] of Object.entries(value)) {
      const childSchema = properties[key] ?? schema.additionalProperties;
      celErrors(childSchema, child, path ? `${path}.${key}` : key, result);
    }
  }
  if (Array.isArray(value)) {
    value.forEach((item, i) => celErrors(schema.items, item, `${path}[${i}]`, result));
  }
}

const describe = (e: ErrorObject): string => {
  const where = e.instancePath.replace(/^\//, '').replace(/\//g, '.') || '<root>';
  const extra =
    e.keyword === 'additionalProperties'
      ? ` (${String((e.params as { additionalProperty: string }).additionalProperty)})`
      : '';
  return `${where}: ${e.message ?? e.keyword}${extra}`;
};

export function loadCrdValidator(crdFile: string, version?: string): CrdValidator {
  const crd: unknown = parse(readFileSync(crdFile, 'utf8'));
  if (!isRecord(crd) || !isRecord(crd.spec) || !Array.isArray(crd.spec.versions)) {
    throw new Error(`${crdFile}: not a CustomResourceDefinition`);
  }
  const spec = crd.spec;
  const versions = spec.versions as Schema[];
  const served = versions.find((v) => (version ? v.name === version : v.storage === true));
  const schema = isRecord(served?.schema) ? served.schema.openAPIV3Schema : undefined;
  if (!isRecord(schema)) throw new Error(`${crdFile}: no openAPIV3Schema for ${version}`);

  const ajv = new Ajv({ allErrors: true, strict: false, logger: false });
  addFormats(ajv);
  for (const format of ['int32', 'int64', 'float', 'double', 'byte', 'quantity', 'duration']) {
    ajv.addFormat(format, true);
  }
  const validateSchema: ValidateFunction = ajv.compile(strictify(schema) as Schema);
  const names = isRecord(spec.names) ? spec.names : {};
  return {
    group: String(spec.group),
    kind: String(names.kind),
    validate(object: unknown): CrdValidationResult {
      const result: CrdValidationResult = { valid: true, errors: [], skippedRules: [] };
      if (!validateSchema(object))
        result.errors.push(...(validateSchema.errors ?? []).map(describe));
      celErrors(schema, object, '', result);
      result.valid = result.errors.length === 0;
      return result;
    },
  };
}
