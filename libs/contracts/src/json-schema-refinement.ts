/**
 * The metadata key under which a zod refinement is also stated in JSON Schema keywords, for
 * compileJsonValidator: only a schema carrying it keeps its JSON Schema when it has a refinement.
 * Apart from json-validator.ts so that the contracts the sidecar loads do not load ajv.
 */
export const REFINEMENT_KEYWORDS = 'x-fleet-refinement-keywords';

/**
 * `.meta(refinementInJsonSchema({ maxProperties: 16 }))` beside `.refine(...)`: the refinement as
 * JSON Schema says it. The compiled validator trusts these keywords in place of the refinement, so
 * they must refuse at least what the refinement refuses (json-validator.spec.ts checks the
 * contract's against zod).
 */
export function refinementInJsonSchema<K extends Record<string, unknown>>(
  keywords: K,
): K & { [REFINEMENT_KEYWORDS]: string[] } {
  return { ...keywords, [REFINEMENT_KEYWORDS]: Object.keys(keywords) };
}
