import { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import * as ajvFormatsModule from 'ajv-formats';

import { CelCompileFailure, compileRule, CompiledRule, ValidationRule } from './cel.js';
import { cause, formatValue, StatusCause } from './causes.js';
import { clone, deepEqual, isObject, JsonObject } from './json.js';

export interface JSONSchemaProps {
  type?: string;
  format?: string;
  description?: string;
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps | boolean;
  items?: JSONSchemaProps;
  required?: string[];
  enum?: unknown[];
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  minProperties?: number;
  maxProperties?: number;
  nullable?: boolean;
  default?: unknown;
  allOf?: JSONSchemaProps[];
  anyOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  'x-kubernetes-validations'?: ValidationRule[];
}

const OBJECT_META_FIELDS = new Set([
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
]);

type AddFormats = (ajv: Ajv, formats?: string[]) => Ajv;
const addFormats: AddFormats = ((ajvFormatsModule as unknown as { default?: AddFormats }).default ??
  ajvFormatsModule) as unknown as AddFormats;

/**
 * Patterns as the API server runs them (Go's RE2): a leading `(?i)` makes the whole pattern
 * case-insensitive (the AKSNodeClass CRD's vnetSubnetID), which JS regexps spell as a flag.
 */
const re2Pattern = Object.assign(
  (pattern: string, flags: string): RegExp =>
    pattern.startsWith('(?i)')
      ? new RegExp(pattern.slice(4), `${flags}i`)
      : new RegExp(pattern, flags),
  { code: 'new RegExp' },
);

let sharedAjv: Ajv | undefined;
function ajv(): Ajv {
  if (sharedAjv) return sharedAjv;
  // Go regexps (RE2) are closer to non-unicode JS regexps; unicode mode rejects escapes like `\_`.
  const a = new Ajv({
    allErrors: true,
    strict: false,
    unicodeRegExp: false,
    allowUnionTypes: true,
    validateFormats: true,
    code: { regExp: re2Pattern },
  });
  addFormats(a, ['date', 'date-time', 'uri', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid', 'byte']);
  a.addFormat('duration', /^[-+]?((\d+(\.\d*)?|\.\d+)\s*(ns|us|µs|ms|s|m|h|d|w)\s*)+$|^0$/);
  a.addFormat('datetime', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/);
  a.addFormat('cidr', (s: string) => /^[0-9a-fA-F.:]+\/\d{1,3}$/.test(s));
  a.addFormat('mac', /^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$/);
  sharedAjv = a;
  return a;
}

const KNOWN_FORMATS = new Set([
  'date',
  'date-time',
  'datetime',
  'uri',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'uuid',
  'byte',
  'duration',
  'cidr',
  'mac',
]);

/** Structural schema → plain JSON schema for ajv (value validations only; pruning is ours). */
function toAjvSchema(s: JSONSchemaProps, root: boolean): JsonObject {
  const out: JsonObject = {};
  const nullable = s.nullable === true;
  if (s['x-kubernetes-int-or-string'])
    out.type = nullable ? ['integer', 'string', 'null'] : ['integer', 'string'];
  else if (s.type) out.type = nullable ? [s.type, 'null'] : s.type;
  if (s.enum) out.enum = nullable ? [...s.enum, null] : s.enum;
  for (const k of [
    'pattern',
    'minimum',
    'maximum',
    'multipleOf',
    'minLength',
    'maxLength',
    'minItems',
    'maxItems',
    'uniqueItems',
    'minProperties',
    'maxProperties',
  ] as const) {
    if (s[k] !== undefined) out[k] = s[k];
  }
  if (s.exclusiveMinimum && s.minimum !== undefined) {
    delete out.minimum;
    out.exclusiveMinimum = s.minimum;
  }
  if (s.exclusiveMaximum && s.maximum !== undefined) {
    delete out.maximum;
    out.exclusiveMaximum = s.maximum;
  }
  if (s.format && KNOWN_FORMATS.has(s.format) && (s.type === 'string' || !s.type))
    out.format = s.format;
  if (s.required) out.required = s.required;
  if (s.properties) {
    const props: JsonObject = {};
    for (const [k, v] of Object.entries(s.properties)) {
      // ObjectMeta is validated by the server's own rules, not by the CRD schema.
      if (root && (k === 'metadata' || k === 'apiVersion' || k === 'kind')) continue;
      props[k] = toAjvSchema(v, false);
    }
    out.properties = props;
  }
  if (isObject(s.additionalProperties))
    out.additionalProperties = toAjvSchema(s.additionalProperties, false);
  if (s.items) out.items = toAjvSchema(s.items, false);
  for (const k of ['allOf', 'anyOf', 'oneOf'] as const) {
    const list = s[k];
    if (list) out[k] = list.map((x) => toAjvSchema(x, false));
  }
  if (s.not) out.not = toAjvSchema(s.not, false);
  if (root && Array.isArray(out.required)) {
    out.required = (out.required as string[]).filter(
      (r) => r !== 'metadata' && r !== 'apiVersion' && r !== 'kind',
    );
  }
  return out;
}

function schemaType(s: JSONSchemaProps | undefined): string {
  if (!s) return 'object';
  if (s['x-kubernetes-int-or-string']) return 'string';
  return s.type ?? 'object';
}

export interface ProcessOptions {
  /** object previously stored, for transition rules (oldSelf) */
  old?: unknown;
  /** do not prune/default (status-only write paths still call this with the full object) */
  skipMutation?: boolean;
  /**
   * As kube-apiserver answers a write (the emulated API server): an error it deems blocking
   * (not supported, required, too long, too many, wrong type) skips every CEL rule and adds its
   * "some validation rules were not checked" cause, and an object's missing required fields are
   * reported after its properties' own errors (apiextensions-apiserver's customResourceStrategy
   * and kube-openapi's object validator). The API's own checks report CEL errors beside schema
   * errors, which tells a user more.
   */
  asApiServer?: boolean;
}

/** Schema errors after which kube-apiserver evaluates no CEL rule (hasBlockingErr). */
const BLOCKING_REASONS = new Set([
  'FieldValueNotSupported',
  'FieldValueRequired',
  'FieldValueTooLong',
  'FieldValueTooMany',
  'FieldValueTypeInvalid',
]);

export interface ProcessResult {
  causes: StatusCause[];
  unknownFields: string[];
}

/** Compiled, cached view of one CRD version's schema. */
export class StructuralSchema {
  private validateFn?: ValidateFunction;
  private readonly rules = new Map<JSONSchemaProps, CompiledRule[]>();
  readonly compileFailures: CelCompileFailure[] = [];

  constructor(
    readonly schema: JSONSchemaProps,
    readonly owner: string,
  ) {
    this.collectRules(schema, '');
  }

  private collectRules(s: JSONSchemaProps, path: string): void {
    const rules = s['x-kubernetes-validations'];
    if (rules?.length) {
      const compiled = rules.map((r) => compileRule(r));
      for (const c of compiled) {
        if (c.error)
          this.compileFailures.push({
            crd: this.owner,
            path: path || '<root>',
            rule: c.rule.rule,
            error: c.error,
          });
      }
      this.rules.set(s, compiled);
    }
    if (s.properties)
      for (const [k, v] of Object.entries(s.properties))
        this.collectRules(v, path ? `${path}.${k}` : k);
    if (isObject(s.additionalProperties)) this.collectRules(s.additionalProperties, `${path}[*]`);
    if (s.items) this.collectRules(s.items, `${path}[*]`);
  }

  private validator(): ValidateFunction {
    if (!this.validateFn) this.validateFn = ajv().compile(toAjvSchema(this.schema, true));
    return this.validateFn;
  }

  /** Prunes unknown fields and applies defaults in place (the decode step of a real server). */
  pruneAndDefault(obj: JsonObject): string[] {
    const unknown: string[] = [];
    pruneDefault(obj, this.schema, '', unknown, true, true);
    return unknown;
  }

  /** Pruning without defaulting, for applied configurations (defaults must not become owned). */
  prune(obj: JsonObject): string[] {
    const unknown: string[] = [];
    pruneDefault(obj, this.schema, '', unknown, true, false);
    return unknown;
  }

  validate(obj: JsonObject, opts: ProcessOptions = {}): StatusCause[] {
    const causes: StatusCause[] = [];
    const validate = this.validator();
    if (!validate(obj)) {
      for (const e of filterErrors(validate.errors ?? [])) {
        const c = ajvErrorToCause(e, obj, this.schema);
        if (c) causes.push(c);
      }
    }
    listTypeChecks(obj, this.schema, '', causes, true);
    const schemaFailed = causes.length > 0;
    if (opts.asApiServer) {
      const ordered = [
        ...causes.filter((c) => c.reason !== 'FieldValueRequired'),
        ...causes.filter((c) => c.reason === 'FieldValueRequired'),
      ];
      if (ordered.some((c) => BLOCKING_REASONS.has(c.reason))) {
        if (this.rules.size > 0) {
          ordered.push({
            reason: 'FieldValueInvalid',
            field: '<nil>',
            message:
              'Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
          });
        }
        return dedupe(ordered);
      }
      this.evalRules(obj, opts.old, this.schema, '', ordered, schemaFailed, true);
      return dedupe(ordered);
    }
    this.evalRules(obj, opts.old, this.schema, '', causes, schemaFailed, true);
    return dedupe(causes);
  }

  private evalRules(
    value: unknown,
    old: unknown,
    s: JSONSchemaProps,
    path: string,
    causes: StatusCause[],
    schemaFailed: boolean,
    root: boolean,
  ): void {
    if (value === undefined || value === null) return;
    const rules = this.rules.get(s);
    if (rules) {
      let selfVal: unknown;
      let oldVal: unknown;
      for (const r of rules) {
        if (!r.program) continue;
        if (r.usesOldSelf && old === undefined && !r.rule.optionalOldSelf) continue;
        if (selfVal === undefined) selfVal = toCel(value, s);
        if (r.usesOldSelf && oldVal === undefined && old !== undefined) oldVal = toCel(old, s);
        let ok: unknown;
        try {
          ok = r.program({ self: selfVal, oldSelf: oldVal });
        } catch (e) {
          if (schemaFailed) continue;
          const msg = e instanceof Error ? e.message.split('\n')[0] : String(e);
          causes.push(
            cause.invalid(ruleField(path, r.rule), schemaType(s), `${r.rule.rule}: ${msg}`),
          );
          continue;
        }
        if (ok !== true) causes.push(ruleFailure(r, path, s, selfVal, oldVal));
      }
    }
    if (Array.isArray(value)) {
      if (!s.items) return;
      const listType = s['x-kubernetes-list-type'];
      const keys = s['x-kubernetes-list-map-keys'] ?? [];
      const oldArr = Array.isArray(old) ? old : undefined;
      value.forEach((item, i) => {
        let oldItem: unknown;
        if (oldArr && listType === 'map')
          oldItem = oldArr.find((o) =>
            keys.every((k) => isObject(o) && isObject(item) && deepEqual(o[k], item[k])),
          );
        else if (oldArr && listType === 'set') oldItem = oldArr.find((o) => deepEqual(o, item));
        this.evalRules(item, oldItem, s.items!, `${path}[${i}]`, causes, schemaFailed, false);
      });
      return;
    }
    if (!isObject(value)) return;
    const oldObj = isObject(old) ? old : undefined;
    if (s.properties) {
      for (const [k, ps] of Object.entries(s.properties)) {
        if (root && k === 'metadata') continue;
        if (value[k] === undefined) continue;
        this.evalRules(
          value[k],
          oldObj?.[k],
          ps,
          path ? `${path}.${k}` : k,
          causes,
          schemaFailed,
          false,
        );
      }
    } else if (isObject(s.additionalProperties)) {
      for (const [k, v] of Object.entries(value)) {
        this.evalRules(
          v,
          oldObj?.[k],
          s.additionalProperties,
          `${path}[${k}]`,
          causes,
          schemaFailed,
          false,
        );
      }
    }
  }
}

function ruleField(path: string, r: ValidationRule): string {
  if (!r.fieldPath) return path;
  const fp = r.fieldPath.startsWith('.') ? r.fieldPath.slice(1) : r.fieldPath;
  return path ? `${path}.${fp}` : fp;
}

function ruleFailure(
  r: CompiledRule,
  path: string,
  s: JSONSchemaProps,
  self: unknown,
  oldSelf: unknown,
): StatusCause {
  let msg = r.rule.message;
  if (!msg && r.messageProgram) {
    try {
      const m = r.messageProgram({ self, oldSelf });
      if (typeof m === 'string' && m.trim()) msg = m;
    } catch {
      // Falls back to the rule text, as the API server does when messageExpression fails.
    }
  }
  if (!msg) msg = `failed rule: ${r.rule.rule}`;
  const field = ruleField(path, r.rule);
  switch (r.rule.reason ?? '') {
    case 'FieldValueForbidden':
      return { reason: 'FieldValueForbidden', field, message: `Forbidden: ${msg}` };
    case 'FieldValueRequired':
      return { reason: 'FieldValueRequired', field, message: `Required value: ${msg}` };
    case 'FieldValueDuplicate':
      return { reason: 'FieldValueDuplicate', field, message: `Duplicate value: ${msg}` };
    default:
      return cause.invalid(field, schemaType(s), msg);
  }
}

function dedupe(causes: StatusCause[]): StatusCause[] {
  const seen = new Set<string>();
  return causes.filter((c) => {
    const k = `${c.field}|${c.reason}|${c.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** CEL sees integers as int (BigInt) and numbers as double, as typed by the schema. */
function toCel(v: unknown, s: JSONSchemaProps | undefined): unknown {
  if (typeof v === 'number') {
    if (s?.type === 'number') return v;
    return Number.isInteger(v) ? BigInt(v) : v;
  }
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    for (const x of v) out.push(toCel(x, s?.items));
    return out;
  }
  if (isObject(v)) {
    const out: JsonObject = {};
    for (const [k, x] of Object.entries(v)) {
      const ps =
        s?.properties?.[k] ??
        (isObject(s?.additionalProperties) ? s.additionalProperties : undefined);
      out[k] = toCel(x, ps);
    }
    return out;
  }
  return v;
}

function pruneDefault(
  value: unknown,
  s: JSONSchemaProps,
  path: string,
  unknown: string[],
  root: boolean,
  defaults: boolean,
): void {
  if (Array.isArray(value)) {
    if (s.items)
      value.forEach((item, i) =>
        pruneDefault(item, s.items!, `${path}[${i}]`, unknown, false, defaults),
      );
    return;
  }
  if (!isObject(value)) return;
  const embedded = root || s['x-kubernetes-embedded-resource'] === true;
  const props = s.properties;
  const addl = s.additionalProperties;
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  for (const k of Object.keys(value)) {
    const child = `${path ? `${path}.` : ''}${k}`;
    if (embedded && (k === 'apiVersion' || k === 'kind')) continue;
    if (embedded && k === 'metadata') {
      const meta = value[k];
      if (isObject(meta)) {
        for (const mk of Object.keys(meta)) {
          if (!OBJECT_META_FIELDS.has(mk)) {
            delete meta[mk];
            unknown.push(`${child}.${mk}`);
          }
        }
      }
      continue;
    }
    const ps = props?.[k] ?? (isObject(addl) ? addl : undefined);
    if (ps) {
      if (value[k] === null && !ps.nullable) {
        delete value[k];
        continue;
      }
      pruneDefault(
        value[k],
        ps,
        isObject(addl) && !props?.[k] ? `${path}[${k}]` : child,
        unknown,
        false,
        defaults,
      );
    } else if (preserve || addl === true || (!props && !addl && s.type !== 'object')) {
      continue;
    } else if (!props && !addl && s.type === 'object' && !preserve) {
      delete value[k];
      unknown.push(child);
    } else {
      delete value[k];
      unknown.push(child);
    }
  }
  if (props && defaults) {
    for (const [k, ps] of Object.entries(props)) {
      if (value[k] === undefined && ps.default !== undefined) {
        value[k] = clone(ps.default);
        pruneDefault(value[k], ps, `${path ? `${path}.` : ''}${k}`, [], false, true);
      }
    }
  }
}

function listTypeChecks(
  value: unknown,
  s: JSONSchemaProps,
  path: string,
  causes: StatusCause[],
  root: boolean,
): void {
  if (Array.isArray(value)) {
    const lt = s['x-kubernetes-list-type'];
    if (lt === 'set') {
      value.forEach((item, i) => {
        if (value.findIndex((o) => deepEqual(o, item)) < i)
          causes.push(cause.duplicate(`${path}[${i}]`, item));
      });
    } else if (lt === 'map') {
      const keys = s['x-kubernetes-list-map-keys'] ?? [];
      value.forEach((item, i) => {
        if (!isObject(item)) return;
        const idx = value.findIndex(
          (o) => isObject(o) && keys.every((k) => deepEqual(o[k], item[k])),
        );
        if (idx < i) {
          const kv: JsonObject = {};
          for (const k of keys) kv[k] = item[k];
          causes.push(cause.duplicate(`${path}[${i}]`, kv));
        }
      });
    }
    if (s.items)
      value.forEach((item, i) => listTypeChecks(item, s.items!, `${path}[${i}]`, causes, false));
    return;
  }
  if (!isObject(value)) return;
  if (s.properties) {
    for (const [k, ps] of Object.entries(s.properties)) {
      if (root && k === 'metadata') continue;
      if (value[k] !== undefined)
        listTypeChecks(value[k], ps, path ? `${path}.${k}` : k, causes, false);
    }
  } else if (isObject(s.additionalProperties)) {
    for (const [k, v] of Object.entries(value))
      listTypeChecks(v, s.additionalProperties, `${path}[${k}]`, causes, false);
  }
}

/** anyOf/oneOf/not branch errors are noise; the API server reports the combinator once. */
function filterErrors(errors: ErrorObject[]): ErrorObject[] {
  return errors.filter(
    (e) => !/\/(anyOf|oneOf)\/\d+\//.test(e.schemaPath) && !/\/not\//.test(e.schemaPath),
  );
}

/** Turns an ajv instancePath into the API server's field path and the offending value. */
function resolvePath(
  instancePath: string,
  obj: unknown,
  schema: JSONSchemaProps,
): { field: string; value: unknown; schema?: JSONSchemaProps } {
  const segs = instancePath
    .split('/')
    .slice(1)
    .map((x) => x.replace(/~1/g, '/').replace(/~0/g, '~'));
  let field = '';
  let cur: unknown = obj;
  let s: JSONSchemaProps | undefined = schema;
  for (const seg of segs) {
    if (Array.isArray(cur)) {
      field += `[${seg}]`;
      cur = cur[Number(seg)];
      s = s?.items;
    } else {
      const isProp = s?.properties?.[seg] !== undefined || !isObject(s?.additionalProperties);
      field += isProp ? (field ? `.${seg}` : seg) : `[${seg}]`;
      cur = isObject(cur) ? cur[seg] : undefined;
      s =
        s?.properties?.[seg] ??
        (isObject(s?.additionalProperties) ? s.additionalProperties : undefined);
    }
  }
  return { field, value: cur, schema: s };
}

function jsType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function ajvErrorToCause(
  e: ErrorObject,
  obj: unknown,
  schema: JSONSchemaProps,
): StatusCause | undefined {
  const { field, value } = resolvePath(e.instancePath, obj, schema);
  const p = e.params as Record<string, unknown>;
  const inBody = field || '<root>';
  switch (e.keyword) {
    case 'required': {
      const missing = String(p.missingProperty);
      return cause.required(field ? `${field}.${missing}` : missing);
    }
    case 'enum':
      return cause.notSupported(
        field,
        value,
        (p.allowedValues as unknown[]).filter((x) => x !== null),
      );
    case 'type': {
      const t = Array.isArray(p.type)
        ? (p.type as string[]).filter((x) => x !== 'null').join(',')
        : String(p.type);
      return cause.typeInvalid(
        field,
        value,
        `${inBody} in body must be of type ${t}: ${JSON.stringify(jsType(value))}`,
      );
    }
    case 'minimum':
      return cause.invalid(
        field,
        value,
        `${inBody} in body should be greater than or equal to ${String(p.limit)}`,
      );
    case 'maximum':
      return cause.invalid(
        field,
        value,
        `${inBody} in body should be less than or equal to ${String(p.limit)}`,
      );
    case 'exclusiveMinimum':
      return cause.invalid(
        field,
        value,
        `${inBody} in body should be greater than ${String(p.limit)}`,
      );
    case 'exclusiveMaximum':
      return cause.invalid(
        field,
        value,
        `${inBody} in body should be less than ${String(p.limit)}`,
      );
    case 'multipleOf':
      return cause.invalid(
        field,
        value,
        `${inBody} in body should be a multiple of ${String(p.multipleOf)}`,
      );
    case 'pattern':
      return cause.invalid(field, value, `${inBody} in body should match '${String(p.pattern)}'`);
    case 'minLength':
      return cause.invalid(
        field,
        value,
        `${inBody} in body should be at least ${String(p.limit)} chars long`,
      );
    case 'maxLength':
      return cause.tooLong(field, Number(p.limit));
    case 'minItems':
      return cause.invalid(
        field,
        value,
        `${inBody} in body should have at least ${String(p.limit)} items`,
      );
    case 'maxItems':
      return cause.tooMany(field, Array.isArray(value) ? value.length : 0, Number(p.limit));
    case 'minProperties':
      return cause.invalid(
        field,
        value,
        `${inBody} in body should have at least ${String(p.limit)} properties`,
      );
    case 'maxProperties':
      return cause.tooMany(field, isObject(value) ? Object.keys(value).length : 0, Number(p.limit));
    case 'uniqueItems':
      return cause.duplicate(field, value);
    case 'format':
      return cause.invalid(
        field,
        value,
        `${inBody} in body must be of type ${String(p.format)}: ${formatValue(value)}`,
      );
    case 'anyOf':
    case 'oneOf':
      return cause.invalid(
        field,
        value,
        `${inBody} in body must validate ${e.keyword === 'anyOf' ? 'at least one' : 'one and only one'} schema (${e.keyword})`,
      );
    case 'not':
      return cause.invalid(
        field,
        value,
        `${inBody} in body should not be valid against the given schema`,
      );
    default:
      return cause.invalid(field, value, e.message ?? e.keyword);
  }
}
