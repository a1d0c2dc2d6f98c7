import type { Context } from 'graphql-ws';
import type { ApiTokensService } from './api-tokens.service.js';
import { bearerSecret } from './auth.guard.js';

/** How often an open graphql-ws socket's token is checked again (mostly from the token cache). */
export const SUBSCRIPTION_RECHECK_MS = 1_000;

/** graphql-ws' close code for a client no longer authorized (its own 4401 "Unauthorized"). */
export const TOKEN_INVALID_CLOSE_CODE = 4401;

interface SocketExtra {
  socket: { close(code: number, reason: string): void };
}

/**
 * Subscriptions are authorized when they start, but a socket can stay open for days: this
 * re-verifies the socket's token every SUBSCRIPTION_RECHECK_MS through the same cached
 * verification as HTTP requests and closes the socket once the token is revoked or expired,
 * so a subscription outlives its token by at most the token cache's lifetime plus one check.
 * A failed check (PostgreSQL away) keeps the socket: the token was not found invalid.
 */
export function subscriptionTokenWatch(tokens: ApiTokensService) {
  const timers = new WeakMap<object, NodeJS.Timeout>();
  return {
    onConnect: async (ctx: Context<Record<string, unknown> | undefined, unknown>) => {
      const authorization = ctx.connectionParams?.authorization;
      const secret = bearerSecret(typeof authorization === 'string' ? authorization : undefined);
      // Without a valid token each operation is refused (UNAUTHENTICATED), as over HTTP.
      if (!secret || !(await tokens.verify(secret))) return true;
      const { socket } = ctx.extra as SocketExtra;
      let checking = false;
      const timer = setInterval(() => {
        if (checking) return;
        checking = true;
        tokens
          .verify(secret)
          .then((principal) => {
            if (principal) return;
            clearInterval(timer);
            socket.close(
              TOKEN_INVALID_CLOSE_CODE,
              'Unauthorized: the API token was revoked or expired',
            );
          })
          .catch(() => undefined)
          .finally(() => (checking = false));
      }, SUBSCRIPTION_RECHECK_MS);
      timer.unref();
      timers.set(ctx, timer);
      return true;
    },
    onClose: (ctx: Context<Record<string, unknown> | undefined, unknown>) => {
      clearInterval(timers.get(ctx));
    },
  };
}
