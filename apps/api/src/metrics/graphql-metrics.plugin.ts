import type { ApolloServerPlugin } from '@apollo/server';
import type { MetricsService } from './metrics.service.js';

/** Latency of every GraphQL operation, by operation name, type and outcome. */
export function graphqlMetricsPlugin(metrics: MetricsService): ApolloServerPlugin {
  return {
    async requestDidStart() {
      const stop = metrics.graphqlSeconds.startTimer();
      return {
        async willSendResponse({ operation, operationName, errors }) {
          stop({
            operation: operationName ?? 'anonymous',
            type: operation?.operation ?? 'invalid',
            outcome: errors?.length ? 'error' : 'ok',
          });
        },
      };
    },
  };
}
