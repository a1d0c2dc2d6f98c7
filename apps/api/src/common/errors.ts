import { GraphQLError } from 'graphql';
import type { z } from 'zod';

/** Error codes clients can branch on, in `extensions.code` (GitHub's API style). */
export type ErrorCode =
  'BAD_USER_INPUT' | 'NOT_FOUND' | 'CONFLICT' | 'FORBIDDEN' | 'UNAUTHENTICATED' | 'RATE_LIMITED';

export function userInputError(field: string, reason: string): GraphQLError {
  return new GraphQLError(`${field}: ${reason}`, {
    extensions: { code: 'BAD_USER_INPUT' satisfies ErrorCode, field, reason },
  });
}

export function notFoundError(what: string, id: string): GraphQLError {
  return new GraphQLError(`${what} ${id} not found`, {
    extensions: { code: 'NOT_FOUND' satisfies ErrorCode },
  });
}

export function forbiddenError(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'FORBIDDEN' satisfies ErrorCode } });
}

export function conflictError(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'CONFLICT' satisfies ErrorCode } });
}

/** Parses input with zod; the first issue becomes a BAD_USER_INPUT naming the field path. */
export function parseInput<S extends z.ZodType>(
  schema: S,
  value: unknown,
  root: string,
): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = [root, ...(issue?.path ?? [])]
    .map((part, i) =>
      typeof part === 'number' ? `[${part}]` : i === 0 ? String(part) : `.${String(part)}`,
    )
    .join('');
  throw userInputError(path, issue?.message ?? 'is invalid');
}
