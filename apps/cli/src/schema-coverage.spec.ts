import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import {
  buildSchema,
  Kind,
  parse,
  validate,
  type GraphQLObjectType,
  type OperationDefinitionNode,
} from 'graphql';
import * as documents from './documents.js';
import { everyCommand, commandPath } from './examples.js';
import { OUTPUT_FORMATS } from './format.js';
import { buildProgram } from './program.js';

/**
 * Every root field of the committed schema (apps/api/src/schema.gql) is reached by a kfleet
 * command, or is in LEFT_OUT with the reason. A field added to the API without either fails
 * here, naming it: covering it, or deciding not to, is a reviewed change of this file.
 */
const COMMAND_FOR: Record<string, string> = {
  'Query.apiTokens': 'tokens list',
  'Query.cluster': 'clusters get',
  'Query.clusters': 'clusters list',
  'Query.deadLetters': 'dead-letters list',
  'Query.fleetSummary': 'summary',
  'Query.fleetHealthHistory': 'history',
  'Query.migrationPlan': 'migrate plan',
  'Query.changePlan': 'plan show',
  'Query.rollout': 'rollouts get',
  'Query.rollouts': 'rollouts list',
  'Query.viewer': 'whoami',
  'Query.profiles': 'profiles list',
  'Query.profile': 'profiles get',
  'Mutation.createProfile': 'profiles create',
  'Mutation.updateProfile': 'profiles update',
  'Mutation.deleteProfile': 'profiles delete',
  'Mutation.resetClusterOverride': 'clusters reset',
  'Mutation.resetClusterOverrides': 'clusters reset',
  'Mutation.setClusterOverrides': 'apply',
  'Mutation.abortRollout': 'rollouts abort',
  'Mutation.approveRolloutStage': 'rollouts approve',
  'Query.rolloutStrategies': 'strategies list',
  'Query.rolloutStrategy': 'strategies get',
  'Mutation.createRolloutStrategy': 'strategies create',
  'Mutation.updateRolloutStrategy': 'strategies update',
  'Mutation.deleteRolloutStrategy': 'strategies delete',
  'Mutation.applyMigrationPlan': 'migrate apply',
  'Mutation.applyPlan': 'plan apply',
  'Mutation.planChange': 'plan',
  'Mutation.createApiToken': 'tokens create',
  'Mutation.deleteNodePool': 'nodepools delete',
  'Mutation.deregisterCluster': 'clusters deregister',
  'Mutation.pauseCluster': 'clusters pause',
  'Mutation.pauseRollout': 'rollouts pause',
  'Mutation.reconcileCluster': 'clusters reconcile',
  'Mutation.redriveAllDeadLetters': 'dead-letters redrive',
  'Mutation.redriveDeadLetter': 'dead-letters redrive',
  'Mutation.registerCluster': 'clusters register',
  'Mutation.resumeCluster': 'clusters resume',
  'Mutation.resumeRollout': 'rollouts resume',
  'Mutation.revokeApiToken': 'tokens revoke',
  'Mutation.rotateClusterCredentials': 'clusters rotate-credentials',
  'Mutation.setKarpenter': 'karpenter enable',
  'Mutation.setNodeClassOverrides': 'nodeclass set',
  'Mutation.startRollout': 'rollouts start',
  'Mutation.updateClusterLabels': 'clusters label',
  'Mutation.upsertNodePool': 'nodepools apply',
  'Subscription.clusterChanged': 'clusters list',
  'Subscription.fleetSummaryChanged': 'summary',
  'Subscription.rolloutChanged': 'rollouts watch',
};

/** Root fields with no command on purpose, and why. Review before adding to this list. */
const LEFT_OUT: Record<string, string> = {
  'Mutation.signOut':
    "ends a session opened by OIDC sign-in (the console's Sign out); kfleet signs in with API tokens, which signOut leaves alone",
  'Query.node':
    'Relay refetch by opaque global ID, for UI caches; kfleet addresses clusters and rollouts by name or ID through clusters get / rollouts get, which accept the same IDs',
};

/** Reads beyond the root queries: they print API objects too, so they take -o as well. */
const OTHER_READS = [
  'history',
  'clusters history',
  'clusters csr',
  'clusters activity',
  'clusters runs',
  'nodeclass show',
  'config get-contexts',
  'version',
];

const schema = buildSchema(readFileSync('apps/api/src/schema.gql', 'utf8'));
const rootFields = (['Query', 'Mutation', 'Subscription'] as const).flatMap((type) =>
  Object.keys((schema.getType(type) as GraphQLObjectType).getFields()).map((f) => `${type}.${f}`),
);

const io = {
  stdout: () => undefined,
  stderr: () => undefined,
  env: {},
  readFile: () => Promise.reject(new Error('no files here')),
  writeFile: () => Promise.reject(new Error('no files here')),
  now: () => new Date(),
};
const commands = new Map(everyCommand(buildProgram(io)).map((c) => [commandPath(c), c]));

const sent: [string, string][] = Object.entries(documents as Record<string, unknown>).flatMap(
  ([name, text]) => (typeof text === 'string' ? [[name, text] as [string, string]] : []),
);

describe('the CLI covers the API (schema walk)', () => {
  it('gives every root field of the schema a command, or a reason in LEFT_OUT', () => {
    const uncovered = rootFields.filter((f) => !(f in COMMAND_FOR) && !(f in LEFT_OUT));
    expect(uncovered).toEqual([]);
    // And neither list names a field the schema no longer has, nor both name one field.
    const stale = [...Object.keys(COMMAND_FOR), ...Object.keys(LEFT_OUT)].filter(
      (f) => !rootFields.includes(f),
    );
    expect(stale).toEqual([]);
    expect(Object.keys(LEFT_OUT).filter((f) => f in COMMAND_FOR)).toEqual([]);
  });

  it('names commands that exist', () => {
    const missing = Object.values(COMMAND_FOR).filter((path) => !commands.has(path));
    expect(missing).toEqual([]);
  });

  it('sends a document for every covered field, each valid against the committed schema', () => {
    const used = new Set<string>();
    for (const [name, text] of sent) {
      const doc = parse(text);
      expect([name, validate(schema, doc).map((e) => e.message)]).toEqual([name, []]);
      for (const def of doc.definitions) {
        if (def.kind !== Kind.OPERATION_DEFINITION) continue;
        const op: OperationDefinitionNode = def;
        const type = { query: 'Query', mutation: 'Mutation', subscription: 'Subscription' }[
          op.operation
        ];
        for (const sel of op.selectionSet.selections)
          if (sel.kind === Kind.FIELD) used.add(`${type}.${sel.name.value}`);
      }
    }
    expect(Object.keys(COMMAND_FOR).filter((f) => !used.has(f))).toEqual([]);
  });

  it('gives every read -o table|wide|json|yaml|name', () => {
    const reads = [
      ...Object.entries(COMMAND_FOR)
        .filter(([field]) => field.startsWith('Query.'))
        .map(([, path]) => path),
      ...OTHER_READS,
    ];
    const lacking = reads.filter((path) => {
      const output = commands.get(path)?.options.find((o) => o.long === '--output');
      return JSON.stringify(output?.argChoices) !== JSON.stringify(OUTPUT_FORMATS);
    });
    expect(lacking).toEqual([]);
  });
});
