// Field-level causes worded as kube-apiserver words them (k8s.io/apimachinery field errors).

export interface StatusCause {
  reason: string;
  message: string;
  field?: string;
}

/** Formats a value the way field.Invalid/field.NotSupported print it (Go %#v-ish / JSON). */
export function formatValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (Array.isArray(v)) return '[]interface {}{...}';
  return '"object"';
}

export const cause = {
  invalid(field: string, value: unknown, detail: string): StatusCause {
    return {
      reason: 'FieldValueInvalid',
      field,
      message: `Invalid value: ${formatValue(value)}: ${detail}`,
    };
  },
  required(field: string, detail = ''): StatusCause {
    return {
      reason: 'FieldValueRequired',
      field,
      message: detail ? `Required value: ${detail}` : 'Required value',
    };
  },
  notSupported(field: string, value: unknown, allowed: unknown[]): StatusCause {
    const list = allowed.map((a) => formatValue(a)).join(', ');
    return {
      reason: 'FieldValueNotSupported',
      field,
      message: `Unsupported value: ${formatValue(value)}: supported values: ${list}`,
    };
  },
  tooLong(field: string, max: number): StatusCause {
    return {
      reason: 'FieldValueTooLong',
      field,
      message: `Too long: may not be more than ${max} bytes`,
    };
  },
  tooMany(field: string, actual: number, max: number): StatusCause {
    return {
      reason: 'FieldValueTooMany',
      field,
      message: `Too many: ${actual}: must have at most ${max} items`,
    };
  },
  duplicate(field: string, value: unknown): StatusCause {
    return {
      reason: 'FieldValueDuplicate',
      field,
      message: `Duplicate value: ${typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value)}`,
    };
  },
  forbidden(field: string, detail: string): StatusCause {
    return { reason: 'FieldValueForbidden', field, message: `Forbidden: ${detail}` };
  },
  typeInvalid(field: string, value: unknown, detail: string): StatusCause {
    return {
      reason: 'FieldValueTypeInvalid',
      field,
      message: `Invalid value: ${formatValue(value)}: ${detail}`,
    };
  },
};
