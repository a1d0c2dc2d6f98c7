import { Ajv2020 } from 'ajv/dist/2020.js';
import { z, type ZodType } from 'zod';
import { REFINEMENT_KEYWORDS } from './json-schema-refinement.js';

/**
 * A compiled check that a parsed JSON value is accepted by a zod schema, for hot paths (issue 48,
 * target 1: zod's walk of each report, and the copy it returns, were a tenth of the API's time a
 * report). Built from the schema's own JSON Schema (zod's patterns and lengths, its regular
 * expressions without the u flag, as zod checks them), so it never accepts what zod refuses:
 * a refinement makes its subschema accept nothing (`not: {}`) unless the schema's metadata states
 * it in JSON Schema keywords (`.meta(refinementInJsonSchema({ maxProperties: 16 }))`, present in
 * the generated schema). False means "ask zod", which has the last word and names the field:
 * callers run zod when this says false.
 */
export function compileJsonValidator(schema: ZodType): (value: unknown) => boolean {
  const jsonSchema = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'throw',
    override: ({ zodSchema, jsonSchema }) => {
      const checks = (zodSchema._zod.def as { checks?: { _zod: { def: { check: string } } }[] })
        .checks;
      if (!checks?.some((c) => c._zod.def.check === 'custom')) return;
      const said: Record<string, unknown> =
        z.globalRegistry.get(zodSchema as unknown as ZodType) ?? {};
      const keywords = said[REFINEMENT_KEYWORDS];
      const json = jsonSchema as Record<string, unknown>;
      delete json[REFINEMENT_KEYWORDS];
      if (
        Array.isArray(keywords) &&
        keywords.length > 0 &&
        keywords.every((k) => typeof k === 'string' && k in json)
      )
        return;
      for (const key of Object.keys(json)) delete json[key];
      json.not = {};
    },
  });
  const ajv = new Ajv2020({
    strict: false,
    allErrors: false,
    validateFormats: false, // zod's own patterns are in the schema beside each format
    unicodeRegExp: false, // zod's regular expressions have no u flag
  });
  const validate = ajv.compile(jsonSchema);
  return (value) => validate(value);
}
