import type { GraphQLFormattedError } from 'graphql';
import { randomUUID } from 'node:crypto';

/**
 * Apollo's formatError: errors the API raised on purpose (a GraphQLError with its own
 * extensions.code, and Apollo's parse and validation errors) go to the client as they are. Any
 * other error — a PostgreSQL or Redis failure, a bug — would leak internals (SQL, stack traces),
 * so it is logged with an id and the client gets only that id to quote.
 */
export function maskInternalErrors(
  log: (line: Record<string, unknown>) => void,
): (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError {
  return (formatted, error) => {
    const code = formatted.extensions?.code;
    if (code !== undefined && code !== 'INTERNAL_SERVER_ERROR') {
      const { stacktrace: _stacktrace, ...extensions } = formatted.extensions ?? {};
      return { ...formatted, extensions };
    }
    const errorId = randomUUID();
    const original = (error as { originalError?: unknown } | null)?.originalError ?? error;
    log({
      level: 'error',
      msg: 'internal error',
      errorId,
      path: formatted.path,
      err:
        original instanceof Error
          ? { message: original.message, stack: original.stack }
          : String(original),
    });
    return {
      message: `internal error; quote error ID ${errorId} to the fleet's operators`,
      ...(formatted.path ? { path: formatted.path } : {}),
      ...(formatted.locations ? { locations: formatted.locations } : {}),
      extensions: { code: 'INTERNAL_SERVER_ERROR', errorId },
    };
  };
}
