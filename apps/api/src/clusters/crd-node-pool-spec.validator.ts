import { clone, loadCrdSchema, type StructuralSchema } from '@fleet/crd-schema';
import { join } from 'node:path';
import type { NodePoolSpecValidator, SpecViolation } from './node-pool-spec.validator.js';

/** Where the upstream Karpenter CRDs live; see docs/DEVELOPMENT.md ("CRDs"). */
export const karpenterCrdDir = (): string =>
  process.env.KARPENTER_CRD_DIR ?? join(process.cwd(), '..', 'shared', 'fixtures', 'crds', 'karpenter');

/**
 * The NodePool CRD's own OpenAPI schema and CEL rules, evaluated in process. Unknown fields are
 * refused (a real server would silently prune them, and an SRE would never learn of the typo).
 */
export class CrdNodePoolSpecValidator implements NodePoolSpecValidator {
  constructor(private readonly schema: StructuralSchema) {}

  static fromFixtures(dir = karpenterCrdDir()): CrdNodePoolSpecValidator {
    return new CrdNodePoolSpecValidator(loadCrdSchema(join(dir, 'karpenter.sh_nodepools.yaml'), 'v1'));
  }

  validate(name: string, spec: unknown): SpecViolation[] {
    if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
      return [{ field: '', reason: 'must be an object (a karpenter.sh/v1 NodePool spec)' }];
    }
    const nodePool = {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name },
      spec: clone(spec),
    };
    const unknown = this.schema.pruneAndDefault(nodePool);
    const violations = unknown.map((field) => ({
      field: field.replace(/^spec\.?/, ''),
      reason: 'unknown field (not in the karpenter.sh/v1 NodePool schema)',
    }));
    for (const cause of this.schema.validate(nodePool)) {
      violations.push({ field: (cause.field ?? '').replace(/^spec\.?/, ''), reason: cause.message });
    }
    return violations;
  }
}
