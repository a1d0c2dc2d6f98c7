import type { ApolloServerPlugin } from '@apollo/server';
import { Kind, type OperationDefinitionNode } from 'graphql';
import type { MetricsService } from './metrics.service.js';

/**
 * The label for an operation: its first root field, which validation has checked against the
 * schema, so the label set is the schema's root fields — never the client-chosen operationName,
 * which would let any caller grow the registry without bound.
 */
function rootField(operation: OperationDefinitionNode | undefined | null): string {
  const first = operation?.selectionSet.selections[0];
  if (!first) return 'invalid';
  return first.kind === Kind.FIELD ? first.name.value : 'fragment';
}

/** Latency of every GraphQL operation, by root field, type and outcome. */
export function graphqlMetricsPlugin(metrics: MetricsService): ApolloServerPlugin {
  return {
    requestDidStart() {
      const stop = metrics.graphqlSeconds.startTimer();
      return Promise.resolve({
        willSendResponse({ operation, errors }) {
          stop({
            operation: rootField(operation),
            type: operation?.operation ?? 'invalid',
            outcome: errors?.length ? 'error' : 'ok',
          });
          return Promise.resolve();
        },
      });
    },
  };
}
