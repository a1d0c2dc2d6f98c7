import {
  DRIVER_REGISTRY,
  InvalidDesiredStateError,
  supportedPairs,
  type PlatformRules,
} from '@fleet/cloud-provider';
import { NODEPOOL, NodeClassOverrides, type Platform, type Topology } from '@fleet/contracts';
import { clone, loadCrdSchema, type StructuralSchema } from '@fleet/crd-schema';
import { join } from 'node:path';

/** A reason the real CRD would reject a spec, with the path below the input field. */
export interface SpecViolation {
  field: string;
  reason: string;
}

const relative = (field: string, prefix: string) =>
  field.replace(new RegExp(`^${prefix.replace('.', '\\.')}\\.?`), '');

/**
 * Checks NodePools and NodeClass overrides with the real CRDs' OpenAPI schemas and CEL rules, so
 * the API refuses what a cluster's API server would refuse, before anything is stored. Unknown
 * fields are refused too: a real server silently prunes them, and the SRE would never learn of
 * the typo.
 */
export class KarpenterSpecValidator {
  constructor(
    private readonly nodePool: StructuralSchema,
    /** By `platform/topology`: a hosted AWS cluster's NodeClass is HyperShift's OpenshiftEC2NodeClass. */
    private readonly nodeClasses: ReadonlyMap<
      string,
      { rules: PlatformRules; schema: StructuralSchema }
    >,
  ) {}

  /** The NodePool CRD, and the NodeClass CRD of every platform and topology a driver serves. */
  static fromDirectory(dir: string): KarpenterSpecValidator {
    const nodeClasses = new Map<string, { rules: PlatformRules; schema: StructuralSchema }>();
    for (const { platform, topology, rules } of DRIVER_REGISTRY) {
      const schema = loadCrdSchema(join(dir, rules.nodeClassCrdFile), rules.nodeClass.version);
      nodeClasses.set(`${platform}/${topology}`, { rules, schema });
    }
    return new KarpenterSpecValidator(
      loadCrdSchema(join(dir, 'karpenter.sh_nodepools.yaml'), NODEPOOL.version),
      nodeClasses,
    );
  }

  validateNodePool(name: string, spec: unknown): SpecViolation[] {
    if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
      return [{ field: '', reason: 'must be an object (a karpenter.sh/v1 NodePool spec)' }];
    }
    const object = {
      apiVersion: NODEPOOL.apiVersion,
      kind: NODEPOOL.kind,
      metadata: { name },
      spec: clone(spec),
    };
    return this.check(this.nodePool, object, 'spec', 'karpenter.sh/v1 NodePool');
  }

  /**
   * Overrides are checked by the provider of the cluster's platform: as part of a complete
   * NodeClass against its CRD, then by the provider's own rules.
   */
  validateNodeClassOverrides(
    platform: Platform,
    input: unknown,
    topology: Topology = 'STANDALONE',
  ): SpecViolation[] {
    const nodeClass = this.nodeClasses.get(`${platform}/${topology}`);
    if (!nodeClass) {
      return [
        {
          field: '',
          reason: `NodeClass overrides need a driver for platform ${platform} with topology ${topology}; the fleet has drivers for ${supportedPairs()}`,
        },
      ];
    }
    const parsed = NodeClassOverrides.safeParse(input);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      return [{ field: issue.path.join('.'), reason: issue.message }];
    }
    const overrides = parsed.data;
    const { rules, schema } = nodeClass;
    const violations = this.check(
      schema,
      rules.nodeClassForValidation(overrides),
      'spec',
      `${rules.nodeClass.apiVersion} ${rules.nodeClass.kind}`,
    );
    if (violations.length) return violations;
    try {
      rules.validateNodeClassOverrides(overrides);
    } catch (err) {
      if (err instanceof InvalidDesiredStateError) {
        return err.causes.map((c) => ({
          field: relative(c.field, 'nodeClassOverrides'),
          reason: c.message,
        }));
      }
      throw err;
    }
    return [];
  }

  private check(
    schema: StructuralSchema,
    object: Record<string, unknown>,
    root: string,
    what: string,
  ): SpecViolation[] {
    const unknown = schema.pruneAndDefault(object);
    const violations = unknown.map((field) => ({
      field: relative(field, root),
      reason: `unknown field (not in the ${what} schema)`,
    }));
    for (const cause of schema.validate(object)) {
      violations.push({ field: relative(cause.field ?? '', root), reason: cause.message });
    }
    return violations;
  }
}
