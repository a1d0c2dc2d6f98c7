/** A reason the real NodePool CRD would reject a spec, with the path below `spec`. */
export interface SpecViolation {
  field: string;
  reason: string;
}

/**
 * Checks a karpenter.sh/v1 NodePool spec against the real CRD (OpenAPI schema and CEL rules), so
 * the API refuses what the cluster's API server would refuse, before anything is stored.
 */
export interface NodePoolSpecValidator {
  validate(name: string, spec: unknown): SpecViolation[];
}

export const NODE_POOL_SPEC_VALIDATOR = Symbol('NODE_POOL_SPEC_VALIDATOR');
