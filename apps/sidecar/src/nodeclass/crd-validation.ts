import type { FieldCause, KubeObject, TargetedObject } from '@fleet/cloud-provider';
import { clone, StructuralSchema, type JSONSchemaProps } from '@fleet/crd-schema';

interface CrdShape {
  spec?: {
    group?: string;
    names?: { kind?: string };
    versions?: { name: string; schema?: { openAPIV3Schema?: JSONSchemaProps } }[];
  };
  metadata?: { name?: string };
}

/**
 * Checks rendered custom resources against the CRDs the sidecar installs, before anything is
 * applied: the API server would reject (or silently prune) the same object halfway through an
 * order otherwise, leaving the operand applied and the NodeClass not.
 */
export class CrdValidator {
  private readonly schemas = new Map<string, StructuralSchema>();

  constructor(crds: readonly TargetedObject[]) {
    this.use(crds);
  }

  /** Validates against these CRDs from now on (another Karpenter release was installed). */
  use(crds: readonly TargetedObject[]): void {
    this.schemas.clear();
    for (const { object } of crds) {
      const crd = object as KubeObject & CrdShape;
      for (const version of crd.spec?.versions ?? []) {
        const schema = version.schema?.openAPIV3Schema;
        if (!schema || !crd.spec?.group || !crd.spec.names?.kind) continue;
        this.schemas.set(
          `${crd.spec.group}/${version.name}/${crd.spec.names.kind}`,
          new StructuralSchema(schema, crd.metadata?.name ?? crd.spec.names.kind),
        );
      }
    }
  }

  /** Causes naming each offending field; unknown fields count, since the server would drop them. */
  validate(object: KubeObject): FieldCause[] {
    const schema = this.schemas.get(`${object.apiVersion}/${object.kind}`);
    if (!schema) return [];
    const candidate = clone(object) as Record<string, unknown>;
    const unknown = schema.pruneAndDefault(candidate);
    return [
      ...unknown.map((field) => ({ field, message: 'unknown field (the CRD does not define it)' })),
      ...schema.validate(candidate).map((c) => ({ field: c.field ?? '', message: c.message })),
    ];
  }
}
