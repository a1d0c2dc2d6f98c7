import type { Grant } from './differential-coverage.js';

// Differences between the emulated and the real kube-apiserver left as they are, each for a
// request no role of the product is granted (differential-coverage.spec.ts proves it), so the
// product never sends it. Never validation, RBAC refusals, server-side apply or watches.

export interface AcceptedDifference {
  /** The request, as `verb group/resource`, whose answers may differ. */
  request: Grant;
  what: string;
}

export const ACCEPTED_DIFFERENCES: readonly AcceptedDifference[] = [
  {
    request: 'delete apiextensions.k8s.io/customresourcedefinitions',
    what:
      'a deleted CRD goes at once with its objects; kube-apiserver first marks it with the ' +
      'customresourcecleanup finalizer and an InstanceDeletionPending condition',
  },
];
