import { z } from 'zod';
import { queueName, ReconcileOrder } from './messages.js';

/**
 * Plans (issue 21 §1): the worker puts a plan order on the cluster's own queue `sidecar.<id>`
 * under this job name and a job ID of its own, so it never collapses with a reconcile order;
 * the sidecar renders the proposed desired state, runs it through its API servers with
 * server-side apply `dryRun=All` and reports the answer to the fleet with its own token.
 */
export const PLAN_JOB_NAME = 'plan';
export const planJobId = (planId: string): string => `plan-${planId}`;

/** What the worker pushes for a plan: the order the change would produce, and the plan's id. */
export const PlanOrder = z.object({
  planId: z.uuid(),
  /** The proposed desired state, built exactly as a reconcile order of it would be. */
  order: ReconcileOrder,
});
export type PlanOrder = z.infer<typeof PlanOrder>;

export const PlannedAction = z.enum(['CREATED', 'CHANGED', 'DELETED', 'UNCHANGED']);
export type PlannedAction = z.infer<typeof PlannedAction>;

/** Fields one object's diff lists; the rest are counted in `moreFields`. */
export const PLAN_DIFF_FIELDS_MAX = 128;
/** Objects one plan report lists (a cluster's whole rendered state is a few dozen). */
export const PLAN_OBJECTS_MAX = 256;
/** The API's body limit for a plan report (the largest valid one is far below it). */
export const PLAN_REPORT_BODY_LIMIT_BYTES = 2 * 1024 * 1024;

/** One field that would change: `.spec.template.spec.expireAfter`, before and after as JSON. */
export const FieldDiff = z.object({
  path: z.string().max(1024),
  /** Absent: the field is not on the live object (it would be added). */
  before: z.unknown().optional(),
  /** Absent: the field would be removed. */
  after: z.unknown().optional(),
});
export type FieldDiff = z.infer<typeof FieldDiff>;

/** A refusal as the API server gave it: the field (`spec.limits.cpu`) and its message. */
export const PlanValidationError = z.object({
  field: z.string().max(1024),
  message: z.string().max(4096),
  /** The cause's reason (FieldValueInvalid, FieldValueRequired, ...) or the Status reason. */
  reason: z.string().max(128).optional(),
});
export type PlanValidationError = z.infer<typeof PlanValidationError>;

export const PlannedObject = z.object({
  target: z.enum(['workload', 'management']),
  apiVersion: z.string().max(253),
  kind: z.string().max(63),
  namespace: z.string().max(63).optional(),
  name: z.string().max(253),
  /** What applying would do; an object the API server refused keeps the action it was tried for. */
  action: PlannedAction,
  /** For CHANGED: the fields that differ between the live object and the API server's answer. */
  diff: z.array(FieldDiff).max(PLAN_DIFF_FIELDS_MAX).default([]),
  moreFields: z.number().int().nonnegative().optional(),
  /** The API server refused the dry run: its causes (or its message as one error). */
  errors: z.array(PlanValidationError).max(64).default([]),
});
export type PlannedObject = z.infer<typeof PlannedObject>;

/** What the sidecar reports for one plan order, with the cluster's own token. */
export const PlanReport = z.object({
  clusterId: z.uuid(),
  planId: z.uuid(),
  /** The generation of the proposed order (the plan's base generation + 1). */
  generation: z.number().int().positive(),
  /** PLANNED: every object was dry-run (some may carry errors); FAILED: the plan could not run. */
  outcome: z.enum(['PLANNED', 'FAILED']),
  /** Why it FAILED, or a note on a PLANNED one (CamelCase reason, message). */
  reason: z
    .string()
    .max(128)
    .regex(/^[A-Za-z][A-Za-z0-9]*$/, 'reasons are CamelCase')
    .optional(),
  message: z.string().max(4096).optional(),
  objects: z.array(PlannedObject).max(PLAN_OBJECTS_MAX).default([]),
  reportedAt: z.iso.datetime(),
});
export type PlanReport = z.infer<typeof PlanReport>;

/** What the API asks of the worker: send the plan's orders to its PENDING clusters. */
export const PLAN_QUEUE = queueName('plans');
export const PlanRequest = z.object({ planId: z.uuid() });
export type PlanRequest = z.infer<typeof PlanRequest>;
