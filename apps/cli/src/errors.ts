/** Exit codes scripts can branch on (documented in README.md, CLI section). */
export const EXIT = {
  ok: 0,
  other: 1,
  usage: 2,
  notFound: 3,
  auth: 4,
  /** What `--wait` or `watch` followed ended badly: a rollout FAILED or ABORTED. */
  failed: 5,
  /** `--wait` / `--timeout` ran out before the outcome. */
  timeout: 6,
  /** What `--wait`, `watch` or `apply` waited on stopped at an approval gate: someone must approve. */
  approvalNeeded: 7,
} as const;

/**
 * A failure the user can act on: printed as one line, never with a stack trace. `code` and
 * `field` are the API's `extensions.code` / `extensions.field` when the error came from it.
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly code?: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'CliError';
  }

  get exitCode(): number {
    return exitCodeFor(this.code);
  }
}

/** A mistake on the command line itself (bad flag value, unreadable file): exit 2. */
export const usageError = (message: string, field?: string): CliError =>
  new CliError(message, 'USAGE', field);

/** A rollout held at its approval gate: what to run to let it go on. */
export const approvalNeeded = (id: string, stage: number | null | undefined): CliError =>
  new CliError(
    `rollout/${id} is WAITING_APPROVAL${stage != null ? ` at stage ${stage}` : ''}: approve it with \`kfleet rollouts approve ${id}\` (or abort it)`,
    'APPROVAL_NEEDED',
  );

export function exitCodeFor(code: string | undefined): number {
  switch (code ?? '') {
    case 'BAD_USER_INPUT':
    case 'GRAPHQL_VALIDATION_FAILED':
    case 'GRAPHQL_PARSE_FAILED':
    case 'USAGE':
      return EXIT.usage;
    case 'NOT_FOUND':
      return EXIT.notFound;
    case 'UNAUTHENTICATED':
    case 'FORBIDDEN':
      return EXIT.auth;
    case 'WAIT_FAILED':
      return EXIT.failed;
    case 'TIMEOUT':
      return EXIT.timeout;
    case 'APPROVAL_NEEDED':
      return EXIT.approvalNeeded;
    default:
      return EXIT.other;
  }
}

/** Codes the CLI raises itself: the message says it all. */
const LOCAL_CODES = new Set(['USAGE', 'WAIT_FAILED', 'TIMEOUT', 'APPROVAL_NEEDED']);

/** `error: <message> (code: X, field: y)` — the code and field only when known. */
export function formatError(err: CliError): string {
  const details = [
    err.code && !LOCAL_CODES.has(err.code) ? `code: ${err.code}` : undefined,
    err.field ? `field: ${err.field}` : undefined,
  ].filter(Boolean);
  return `error: ${err.message}${details.length ? ` (${details.join(', ')})` : ''}`;
}
