import type { ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled } from '@apollo/server/plugin/disabled';

/**
 * Every GraphQL answer is the caller's own (its token's role and scope), so no cache may store
 * it. Apollo's cache-control plugin, installed unless disabled, said so (`no-store`: the API sets
 * no cache hints) but hooked every resolved field to compute hints, and that hook made Apollo wrap
 * every resolver of the schema: a share of the API's CPU for a page of 100 clusters (issue 48,
 * target 4; PERFORMANCE.md). It is disabled, and the header is set here once a response.
 */
export function noStorePlugins(): ApolloServerPlugin[] {
  return [
    ApolloServerPluginCacheControlDisabled(),
    {
      requestDidStart: () =>
        Promise.resolve({
          willSendResponse({ response }) {
            response.http.headers.set('cache-control', 'no-store');
            return Promise.resolve();
          },
        }),
    },
  ];
}
