import type { ApolloServerPlugin } from '@apollo/server';
import {
  GraphQLError,
  Kind,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';

/** Page size assumed for a list field asked without first/last (the API's default). */
const DEFAULT_PAGE = 20;

interface Measure {
  depth: number;
  cost: number;
}

function argValue(
  node: ValueNode | undefined,
  variables: Record<string, unknown>,
): number | undefined {
  if (!node) return undefined;
  if (node.kind === Kind.INT) return Number(node.value);
  if (node.kind === Kind.VARIABLE) {
    const v = variables[node.name.value];
    return typeof v === 'number' ? v : undefined;
  }
  return undefined;
}

/**
 * GitHub-style cost: every field selected costs 1, multiplied by the page sizes of the
 * connections above it, so `clusters(first: 100) { edges { node { reconcileRuns(first: 100) }}}`
 * costs ~10,000 before it runs. Depth ignores introspection fields.
 */
function measure(
  set: SelectionSetNode | undefined,
  fragments: Record<string, FragmentDefinitionNode>,
  variables: Record<string, unknown>,
  multiplier: number,
  seen: Set<string>,
): Measure {
  let depth = 0;
  let cost = 0;
  for (const selection of set?.selections ?? []) {
    let inner: Measure;
    if (selection.kind === Kind.FIELD) {
      if (selection.name.value.startsWith('__')) continue;
      const args = Object.fromEntries(
        (selection.arguments ?? []).map((a) => [a.name.value, a.value]),
      );
      const page = argValue(args.first, variables) ?? argValue(args.last, variables);
      const isPaged =
        'first' in args ||
        'last' in args ||
        /Connection$|^clusters$|^rollouts$/.test(selection.name.value);
      const childMultiplier = multiplier * (isPaged ? (page ?? DEFAULT_PAGE) : 1);
      const child = measure(selection.selectionSet, fragments, variables, childMultiplier, seen);
      inner = { depth: child.depth + 1, cost: multiplier + child.cost };
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      inner = measure(selection.selectionSet, fragments, variables, multiplier, seen);
    } else {
      const name = selection.name.value;
      const fragment = fragments[name];
      if (!fragment || seen.has(name)) continue; // a cycle is a validation error anyway
      inner = measure(
        fragment.selectionSet,
        fragments,
        variables,
        multiplier,
        new Set([...seen, name]),
      );
    }
    depth = Math.max(depth, inner.depth);
    cost += inner.cost;
  }
  return { depth, cost };
}

export function queryLimitsPlugin(limits: {
  maxDepth: number;
  maxCost: number;
}): ApolloServerPlugin {
  return {
    requestDidStart() {
      return Promise.resolve({
        didResolveOperation({ document, operation, request }) {
          const fragments: Record<string, FragmentDefinitionNode> = {};
          for (const def of document.definitions) {
            if (def.kind === Kind.FRAGMENT_DEFINITION) fragments[def.name.value] = def;
          }
          const { depth, cost } = measure(
            (operation as OperationDefinitionNode).selectionSet,
            fragments,
            request.variables ?? {},
            1,
            new Set(),
          );
          if (depth > limits.maxDepth || cost > limits.maxCost) {
            throw new GraphQLError(
              `query too complex: depth ${depth} (max ${limits.maxDepth}), cost ${cost} (max ${limits.maxCost}); ask for fewer or smaller pages`,
              {
                extensions: {
                  code: 'QUERY_TOO_COMPLEX',
                  depth,
                  cost,
                  maxDepth: limits.maxDepth,
                  maxCost: limits.maxCost,
                  http: { status: 400 },
                },
              },
            );
          }
          return Promise.resolve();
        },
      });
    },
  };
}
