/** One rejected field, named the way the API server names causes (`spec.template.spec...`). */
export interface FieldCause {
  field: string;
  message: string;
}

/**
 * Desired state the provider cannot render. Thrown before anything is rendered, so the sidecar
 * applies nothing of an invalid order and reports the causes instead.
 */
export class InvalidDesiredStateError extends Error {
  override readonly name = 'InvalidDesiredStateError';
  constructor(readonly causes: readonly FieldCause[]) {
    super(causes.map((c) => `${c.field}: ${c.message}`).join('; '));
  }
}
