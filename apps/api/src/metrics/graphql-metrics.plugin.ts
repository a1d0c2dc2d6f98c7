import type { ApolloServerPlugin } from '@apollo/server';
import type { MetricsService } from './metrics.service.js';

/** Latency of every GraphQL operation, by operation name, type and outcome. */
export function graphqlMetricsPlugin(metrics: MetricsService): ApolloServerPlugin {
  return {
    requestDidStart() {
      const stop = metrics.graphqlSeconds.startTimer();
      return Promise.resolve({
        willSendResponse({ operation, operationName, errors }) {
          stop({
            operation: operationName ?? 'anonymous',
            type: operation?.operation ?? 'invalid',
            outcome: errors?.length ? 'error' : 'ok',
          });
          return Promise.resolve();
        },
      });
    },
  };
}
