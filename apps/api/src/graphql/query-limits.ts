import type { ApolloServerPlugin } from '@apollo/server';
import {
  GraphQLError,
  Kind,
  OperationTypeNode,
  parse,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLFormattedError,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationRule,
  type ValueNode,
} from 'graphql';
import type { ServerOptions } from 'graphql-ws';
import { unstorableInputErrors } from './storable-input.js';

/** Page size assumed for a list field asked without first/last (the API's default). */
const DEFAULT_PAGE = 20;
/** The page sizes every connection accepts (`pageWindow` in common/connection.ts). */
export const MIN_PAGE = 1;
export const MAX_PAGE = 100;
const PAGE_ARGUMENTS = ['first', 'last'] as const;

export interface QueryLimits extends SelectionLimits {
  maxDepth: number;
  maxCost: number;
}

/** Bounds on the document itself, whatever its page sizes (issue 48, target 6). */
export interface SelectionLimits {
  /** Field selections, every fragment spread counted as if written out where it is spread. */
  maxFields: number;
  /** Aliased field selections, counted the same way. */
  maxAliases: number;
}

/** The code of every refusal by a limit of this file, on HTTP and on the socket alike. */
const TOO_COMPLEX = 'QUERY_TOO_COMPLEX';

interface SelectionCounts {
  fields: number;
  aliases: number;
}

/**
 * The field selections and aliases of a document: every operation's, each fragment spread
 * counted as its fragment's selections written out there (so spreads cannot hide a flood, and a
 * fragment spread twice counts twice), plus those of fragments no operation spreads (validation
 * reads them all the same). One pass: each fragment is counted once and its count reused, so a
 * fragment spreading another twice, thirty deep, costs thirty counts, not 2^30 walks (its count
 * is then far over any limit). A cycle counts nothing where it closes; validation refuses it.
 */
export function selectionCounts(document: DocumentNode): SelectionCounts {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const def of document.definitions) {
    if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
  }
  const counted = new Map<string, SelectionCounts>();
  const counting = new Set<string>();
  const ofFragment = (name: string): SelectionCounts => {
    const known = counted.get(name);
    if (known) return known;
    const fragment = fragments.get(name);
    if (!fragment || counting.has(name)) return { fields: 0, aliases: 0 };
    counting.add(name);
    const counts = ofSet(fragment.selectionSet);
    counting.delete(name);
    counted.set(name, counts);
    return counts;
  };
  const ofSet = (set: SelectionSetNode | undefined): SelectionCounts => {
    let fields = 0;
    let aliases = 0;
    for (const selection of set?.selections ?? []) {
      const inner =
        selection.kind === Kind.FRAGMENT_SPREAD
          ? ofFragment(selection.name.value)
          : ofSet(selection.selectionSet);
      if (selection.kind === Kind.FIELD) {
        fields += 1;
        if (selection.alias) aliases += 1;
      }
      fields += inner.fields;
      aliases += inner.aliases;
    }
    return { fields, aliases };
  };
  const total = { fields: 0, aliases: 0 };
  const add = (counts: SelectionCounts) => {
    total.fields += counts.fields;
    total.aliases += counts.aliases;
  };
  for (const def of document.definitions) {
    if (def.kind === Kind.OPERATION_DEFINITION) add(ofSet(def.selectionSet));
  }
  // Fragments no operation reached (now uncounted): unused, which validation refuses after it
  // has read them.
  for (const name of fragments.keys()) if (!counted.has(name)) add(ofFragment(name));
  return total;
}

/** A count in a message: exact, or past what a double holds exactly (a fragment bomb). */
const shown = (n: number) => (Number.isSafeInteger(n) ? String(n) : 'over 2^53');

/** One error per limit the document is over; empty when it keeps both. */
export function selectionLimitErrors(
  document: DocumentNode,
  limits: SelectionLimits,
): GraphQLError[] {
  const { fields, aliases } = selectionCounts(document);
  const over = (verb: string, what: 'fields' | 'aliases', count: number, limit: number) =>
    count > limit
      ? [
          new GraphQLError(
            `query ${verb} ${shown(count)} ${what}; the limit is ${limit} (fragments count where they are spread)`,
            {
              extensions: {
                code: TOO_COMPLEX,
                [what]: count,
                [what === 'fields' ? 'maxFields' : 'maxAliases']: limit,
                http: { status: 400 },
              },
            },
          ),
        ]
      : [];
  return [
    ...over('selects', 'fields', fields, limits.maxFields),
    ...over('uses', 'aliases', aliases, limits.maxAliases),
  ];
}

/** What the specified rules see once the selection limits refused a document: nothing. */
const EMPTY_DOCUMENT: DocumentNode = { kind: Kind.DOCUMENT, definitions: [] };

/**
 * HTTP: the selection limits as a validation rule, the only step Apollo runs between parsing and
 * executing that can refuse a request with a client error (a plugin hook that throws there is
 * answered 500). graphql-js runs every rule in one walk of the document, so the other rules would
 * still read all 6,000 selections of a 3,000-alias flood (~30 ms) after this one refused it; a
 * visitor that returns a node replaces the node being visited (graphql-js `visit`), and
 * `visitInParallel` hands that node to the walk, so the refused document is swapped for an empty
 * one at its root and nothing else reads the flood. Apollo answers 400 with these errors only.
 */
export function selectionLimitsRule(limits: SelectionLimits): ValidationRule {
  return (context) => ({
    Document(document) {
      const errors = selectionLimitErrors(document, limits);
      if (!errors.length) return undefined;
      for (const error of errors) context.reportError(error);
      return EMPTY_DOCUMENT;
    },
  });
}

/**
 * Apollo relabels every validation rule's error GRAPHQL_VALIDATION_FAILED; a refusal by the
 * selection limits keeps QUERY_TOO_COMPLEX, as on the socket and as the cost limit's does, so a
 * client handles one code for every limit. For Apollo's formatError, before masking.
 */
export function keepQueryLimitCode(
  formatted: GraphQLFormattedError,
  error: unknown,
): GraphQLFormattedError {
  const original = error instanceof GraphQLError ? error.originalError : undefined;
  if (!(original instanceof GraphQLError) || original.extensions.code !== TOO_COMPLEX) {
    return formatted;
  }
  return { ...formatted, extensions: { ...formatted.extensions, code: TOO_COMPLEX } };
}

interface Measure {
  depth: number;
  cost: number;
}

type Variables = Record<string, unknown>;

/** A page argument's value as the resolver will see it: literal, variable or variable default. */
function argValue(
  node: ValueNode | undefined,
  variables: Variables,
  defaults: Record<string, ValueNode | undefined>,
): unknown {
  if (!node) return undefined;
  if (node.kind === Kind.INT) return Number(node.value);
  if (node.kind === Kind.NULL) return null;
  if (node.kind === Kind.VARIABLE) {
    const name = node.name.value;
    if (name in variables) return variables[name];
    return argValue(defaults[name], variables, {});
  }
  return undefined; // any other literal is refused by GraphQL's own validation (Int)
}

const pageError = (field: string, argument: string, value: unknown) =>
  new GraphQLError(
    `${argument}: must be between ${MIN_PAGE} and ${MAX_PAGE} (got ${JSON.stringify(value)} on ${field})`,
    {
      extensions: {
        code: 'BAD_USER_INPUT',
        field: argument,
        reason: `must be between ${MIN_PAGE} and ${MAX_PAGE}`,
        http: { status: 400 },
      },
    },
  );

interface Walk {
  fragments: Record<string, FragmentDefinitionNode>;
  variables: Variables;
  defaults: Record<string, ValueNode | undefined>;
  pageErrors: GraphQLError[];
}

/**
 * GitHub-style cost: every field selected costs 1, multiplied by the page sizes of the
 * connections above it, so `clusters(first: 100) { edges { node { reconcileRuns(first: 100) }}}`
 * costs ~10,000 before it runs. Depth ignores introspection fields. A page size outside 1–100
 * is an error of its own (collected in `walk.pageErrors`), so no value can shrink the cost.
 */
function measure(
  set: SelectionSetNode | undefined,
  walk: Walk,
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
      let page: number | undefined;
      for (const name of PAGE_ARGUMENTS) {
        const value = argValue(args[name], walk.variables, walk.defaults);
        if (value == null) continue;
        if (
          typeof value !== 'number' ||
          !Number.isInteger(value) ||
          value < MIN_PAGE ||
          value > MAX_PAGE
        ) {
          walk.pageErrors.push(pageError(selection.name.value, name, value));
          continue;
        }
        page = Math.max(page ?? 0, value);
      }
      const isPaged =
        'first' in args ||
        'last' in args ||
        /Connection$|^clusters$|^rollouts$/.test(selection.name.value);
      const childMultiplier = multiplier * (isPaged ? (page ?? DEFAULT_PAGE) : 1);
      const child = measure(selection.selectionSet, walk, childMultiplier, seen);
      inner = { depth: child.depth + 1, cost: multiplier + child.cost };
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      inner = measure(selection.selectionSet, walk, multiplier, seen);
    } else {
      const name = selection.name.value;
      const fragment = walk.fragments[name];
      if (!fragment || seen.has(name)) continue; // a cycle is a validation error anyway
      inner = measure(fragment.selectionSet, walk, multiplier, new Set([...seen, name]));
    }
    depth = Math.max(depth, inner.depth);
    cost += inner.cost;
  }
  return { depth, cost };
}

/**
 * The limits every operation of a document must keep, whatever the transport or operation type:
 * page arguments first (an out-of-range `first` is refused naming the argument, before any cost
 * is computed), then depth and cost. Empty when the document may run. Called only on documents
 * within the selection limits (checked first on both transports): `measure` walks each fragment
 * spread anew, so that bound is what keeps its walk short.
 */
export function queryLimitErrors(
  document: DocumentNode,
  variables: Variables | null | undefined,
  limits: QueryLimits,
): GraphQLError[] {
  const fragments: Record<string, FragmentDefinitionNode> = {};
  for (const def of document.definitions) {
    if (def.kind === Kind.FRAGMENT_DEFINITION) fragments[def.name.value] = def;
  }
  const errors: GraphQLError[] = [];
  for (const def of document.definitions) {
    if (def.kind !== Kind.OPERATION_DEFINITION) continue;
    const walk: Walk = {
      fragments,
      variables: variables ?? {},
      defaults: Object.fromEntries(
        (def.variableDefinitions ?? []).map((v) => [v.variable.name.value, v.defaultValue]),
      ),
      pageErrors: [],
    };
    const { depth, cost } = measure(def.selectionSet, walk, 1, new Set());
    if (walk.pageErrors.length) {
      errors.push(...walk.pageErrors);
    } else if (depth > limits.maxDepth || cost > limits.maxCost) {
      errors.push(
        new GraphQLError(
          `query too complex: depth ${depth} (max ${limits.maxDepth}), cost ${cost} (max ${limits.maxCost}); ask for fewer or smaller pages`,
          {
            extensions: {
              code: TOO_COMPLEX,
              depth,
              cost,
              maxDepth: limits.maxDepth,
              maxCost: limits.maxCost,
              http: { status: 400 },
            },
          },
        ),
      );
    }
  }
  return errors;
}

/** HTTP: every query and mutation (Apollo resolves the operation before it executes). */
export function queryLimitsPlugin(limits: QueryLimits): ApolloServerPlugin {
  return {
    requestDidStart() {
      return Promise.resolve({
        didResolveOperation({ document, request }) {
          const [first] = [
            ...unstorableInputErrors(document, request.variables),
            ...queryLimitErrors(document, request.variables, limits),
          ];
          if (first) throw first;
          return Promise.resolve();
        },
      });
    },
  };
}

/**
 * WebSocket (graphql-ws): only subscriptions are served there — queries and mutations go over
 * HTTP, where the rate limiter and body limit apply — and each subscription keeps the same
 * limits as HTTP. Returning errors refuses the operation and leaves the socket open.
 */
export function subscriptionLimits(limits: QueryLimits): Pick<ServerOptions, 'onSubscribe'> {
  return {
    onSubscribe(_ctx, _id, payload) {
      let document: DocumentNode;
      try {
        document = parse(payload.query);
      } catch (err) {
        if (err instanceof GraphQLError) return [err];
        throw err;
      }
      // First, before anything else reads the document: what bounds every later walk of it.
      const tooLarge = selectionLimitErrors(document, limits);
      if (tooLarge.length) return tooLarge;
      const operations = document.definitions.filter(
        (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
      );
      const operation = payload.operationName
        ? operations.find((o) => o.name?.value === payload.operationName)
        : operations.length === 1
          ? operations[0]
          : undefined;
      if (operation && operation.operation !== OperationTypeNode.SUBSCRIPTION) {
        return [
          new GraphQLError(
            `${operation.operation}: only subscriptions are served over WebSocket; send queries and mutations with HTTP POST /graphql`,
            { extensions: { code: 'BAD_REQUEST', field: 'operation' } },
          ),
        ];
      }
      const errors = [
        ...unstorableInputErrors(document, payload.variables),
        ...queryLimitErrors(document, payload.variables, limits),
      ];
      return errors.length ? errors : undefined;
    },
  };
}

/** Largest graphql-ws message accepted; a subscribe message is a query and its variables. */
export const WEBSOCKET_MAX_PAYLOAD_BYTES = 64 * 1024;
