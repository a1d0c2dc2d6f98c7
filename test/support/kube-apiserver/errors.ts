// Status objects worded as kube-apiserver words them, so clients that switch on
// `reason`/`code` (client-node's ApiException, informers) behave as against a real cluster.

import { cause, formatValue, type StatusCause } from '@fleet/crd-schema';

export { cause, formatValue, type StatusCause };

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface StatusObject {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message: string;
  reason: string;
  details?: StatusDetails;
  code: number;
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toStatus(): StatusObject {
    const status: StatusObject = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      code: this.code,
    };
    if (this.details) status.details = this.details;
    return status;
  }
}

/** group-qualified resource as the API server prints it: `nodepools.karpenter.sh`, `configmaps`. */
export function qualifiedResource(plural: string, group: string): string {
  return group ? `${plural}.${group}` : plural;
}

function resourceDetails(plural: string, group: string, name: string): StatusDetails {
  const d: StatusDetails = { name, kind: plural };
  if (group) d.group = group;
  return d;
}

export function notFound(plural: string, group: string, name: string): ApiError {
  return new ApiError(
    404,
    'NotFound',
    `${qualifiedResource(plural, group)} "${name}" not found`,
    resourceDetails(plural, group, name),
  );
}

export function alreadyExists(plural: string, group: string, name: string): ApiError {
  return new ApiError(
    409,
    'AlreadyExists',
    `${qualifiedResource(plural, group)} "${name}" already exists`,
    resourceDetails(plural, group, name),
  );
}

export function conflict(plural: string, group: string, name: string, why: string): ApiError {
  return new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(plural, group)} "${name}": ${why}`,
    resourceDetails(plural, group, name),
  );
}

export const STALE_RV =
  'the object has been modified; please apply your changes to the latest version and try again';

export function badRequest(message: string): ApiError {
  return new ApiError(400, 'BadRequest', message);
}

export function forbidden(
  plural: string,
  group: string,
  name: string,
  why: string,
  causes?: StatusCause[],
): ApiError {
  const d = resourceDetails(plural, group, name);
  if (causes) d.causes = causes;
  return new ApiError(
    403,
    'Forbidden',
    `${qualifiedResource(plural, group)} "${name}" is forbidden: ${why}`,
    d,
  );
}

export function methodNotSupported(plural: string, group: string, verb: string): ApiError {
  return new ApiError(
    405,
    'MethodNotAllowed',
    `${verb} is not supported on resources of kind "${qualifiedResource(plural, group)}"`,
    { group, kind: plural },
  );
}

export function unsupportedMediaType(contentType: string): ApiError {
  return new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json (got ${contentType})`,
  );
}

/**
 * 422 Invalid. `kind` is the Kind (not the resource), qualified by group:
 * `NodePool.karpenter.sh "x" is invalid: spec.weight: Invalid value: ...`.
 */
export function invalid(
  kind: string,
  group: string,
  name: string,
  causes: StatusCause[],
): ApiError {
  const qualified = group ? `${kind}.${group}` : kind;
  const parts = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message));
  const summary = parts.length === 1 ? parts[0]! : `[${parts.join(', ')}]`;
  const d: StatusDetails = { name, kind, causes };
  if (group) d.group = group;
  return new ApiError(422, 'Invalid', `${qualified} "${name}" is invalid: ${summary}`, d);
}

export function expired(message: string): ApiError {
  return new ApiError(410, 'Expired', message);
}

export function unauthorized(): ApiError {
  return new ApiError(401, 'Unauthorized', 'Unauthorized');
}

export function internalError(message: string): ApiError {
  return new ApiError(500, 'InternalError', `Internal error occurred: ${message}`);
}
