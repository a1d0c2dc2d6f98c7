import { InvalidDesiredStateError, validateNodeClassOverrides } from '@fleet/cloud-provider';
import { NodeClassOverrides } from '@fleet/contracts';
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
    private readonly ec2NodeClass: StructuralSchema,
  ) {}

  static fromDirectory(dir: string): KarpenterSpecValidator {
    return new KarpenterSpecValidator(
      loadCrdSchema(join(dir, 'karpenter.sh_nodepools.yaml'), 'v1'),
      loadCrdSchema(join(dir, 'karpenter.k8s.aws_ec2nodeclasses.yaml'), 'v1'),
    );
  }

  validateNodePool(name: string, spec: unknown): SpecViolation[] {
    if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
      return [{ field: '', reason: 'must be an object (a karpenter.sh/v1 NodePool spec)' }];
    }
    const object = {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name },
      spec: clone(spec),
    };
    return this.check(this.nodePool, object, 'spec', 'karpenter.sh/v1 NodePool');
  }

  /** Overrides are checked as part of an EC2NodeClass, then by the provider's own rules. */
  validateAwsNodeClassOverrides(input: unknown): SpecViolation[] {
    const parsed = NodeClassOverrides.safeParse(input);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      return [{ field: issue.path.join('.'), reason: issue.message }];
    }
    const overrides = parsed.data;
    // Placeholders for what discovery fills in; they satisfy the CRD and stay out of the answer.
    const object = {
      apiVersion: 'karpenter.k8s.aws/v1',
      kind: 'EC2NodeClass',
      metadata: { name: 'default' },
      spec: {
        amiFamily: 'Custom',
        amiSelectorTerms: [{ id: 'ami-00000000000000000' }],
        subnetSelectorTerms: [{ id: 'subnet-00000000000000000' }],
        securityGroupSelectorTerms: [{ id: 'sg-00000000000000000' }],
        instanceProfile: 'placeholder',
        ...clone(overrides),
      },
    };
    const violations = this.check(
      this.ec2NodeClass,
      object,
      'spec',
      'karpenter.k8s.aws/v1 EC2NodeClass',
    );
    if (violations.length) return violations;
    try {
      validateNodeClassOverrides(overrides);
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
