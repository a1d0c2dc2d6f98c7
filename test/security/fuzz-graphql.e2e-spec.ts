import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KARPENTER_VERSIONS } from '@fleet/contracts';
import fc from 'fast-check';
import {
  buildSchema,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLSchema,
} from 'graphql';
import { Redis } from 'ioredis';
import { readFileSync } from 'node:fs';
import { createTestDatabase, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import {
  DatabaseFingerprint,
  fuzzParameters,
  hostileString,
  startFuzzedApi,
  type FuzzedApi,
} from './fuzz-support.js';

/**
 * Issue 17: property-based fuzzing of every GraphQL input, derived from the schema the API
 * publishes (apps/api/src/schema.gql): every argument of every root field, every input object
 * type reached from them, so a new field or input type is fuzzed without touching this file.
 * Each generated call is either accepted and handled (a mutation leaves its AuditEvent, a query
 * writes nothing), or refused with a client error (BAD_USER_INPUT and validation errors naming
 * an argument or input field; NOT_FOUND, CONFLICT) and nothing is written to PostgreSQL. Never an
 * internal error; the API process stays healthy and its memory bounded.
 */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const RUNS_PER_FIELD = 10;

const schema: GraphQLSchema = buildSchema(
  readFileSync(new URL('../../apps/api/src/schema.gql', import.meta.url), 'utf8'),
);

/** Root fields over HTTP; subscriptions take the same input types (ClusterFilter) as queries. */
const rootFields = (['query', 'mutation'] as const).flatMap((operation) => {
  const type = operation === 'query' ? schema.getQueryType() : schema.getMutationType();
  return Object.values(type!.getFields())
    .filter((f) => f.args.length > 0)
    .map((field) => ({ operation, field }));
});

const inputTypesOf = (type: GraphQLInputType, seen = new Set<string>()): Set<string> => {
  const named = getNamedType(type);
  if (isInputObjectType(named) && !seen.has(named.name)) {
    seen.add(named.name);
    for (const f of Object.values(named.getFields())) inputTypesOf(f.type, seen);
  }
  return seen;
};

/**
 * Placeholders for objects that exist only at run time (`@cluster` is a registered cluster's
 * global ID, ...), replaced just before each request so that shrinking keeps them meaningful.
 */
const REFS = ['@cluster', '@cluster-uid', '@rollout', '@token'] as const;
type Ref = (typeof REFS)[number];

const dnsLabel = fc.stringMatching(/^[a-z]([a-z0-9-]{0,14}[a-z0-9])?$/);
const iso = fc
  .date({ min: new Date('1990-01-01T00:00:00Z'), max: new Date('2200-01-01T00:00:00Z') })
  .map((d) => d.toISOString());
const globalId = fc
  .tuple(fc.constantFrom('Cluster', 'Rollout', 'ApiToken', 'DeadLetter', 'Nope'), fc.uuid())
  .map(([type, uid]) => Buffer.from(`${type}:${uid}`).toString('base64url'));
const labelKey = fc.oneof(
  dnsLabel,
  dnsLabel.map((k) => `example.com/${k}`),
  fc.constantFrom('env', 'team', 'region'),
);
const labels = fc.dictionary(labelKey, fc.oneof(dnsLabel, fc.constant('')), { maxKeys: 4 });
const nodePoolSpec = fc.record({
  template: fc.record({
    spec: fc.record({
      nodeClassRef: fc.constant({
        group: 'karpenter.k8s.aws',
        kind: 'EC2NodeClass',
        name: 'default',
      }),
      requirements: fc.array(
        fc.record({
          key: fc.constantFrom('karpenter.sh/capacity-type', 'kubernetes.io/arch'),
          operator: fc.constantFrom('In', 'NotIn', 'Exists', 'Bogus'),
          values: fc.array(fc.constantFrom('on-demand', 'spot', 'amd64'), { maxLength: 2 }),
        }),
        { maxLength: 2 },
      ),
    }),
  }),
  limits: fc.record({ cpu: fc.constantFrom('64', '1000', '-1', 'lots') }),
});
const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.dictionary(hostileString, fc.oneof(hostileString, fc.integer(), fc.boolean()), {
    maxKeys: 3,
  }),
);

/** Values that a valid call would carry, by argument or input field name: a hint, not a limit. */
const PLAUSIBLE: Record<string, fc.Arbitrary<unknown>> = {
  name: dnsLabel,
  region: fc.constantFrom('us-east-1', 'eu-west-1'),
  infraID: dnsLabel,
  managementCluster: dnsLabel,
  hcpNamespace: dnsLabel,
  labelSelector: fc.constantFrom('', 'env=prod', 'team in (a,b)', '!gpu', 'env!=dev,team=a'),
  selector: fc.constantFrom('', 'env=prod', 'team in (a,b)', 'fuzz=main'),
  nameContains: dnsLabel,
  karpenterVersion: fc.constantFrom(...KARPENTER_VERSIONS, '0.0.1'),
  operandImage: fc
    .hexaString({ minLength: 64, maxLength: 64 })
    .map((h) => `quay.io/mirror/karpenter@sha256:${h}`),
  interruptionQueue: fc.stringMatching(/^[A-Za-z0-9_-]{1,20}$/),
  webIdentityRoleArn: fc.constantFrom(
    'arn:aws:iam::123456789012:role/karpenter',
    'arn:aws:iam::123456789012:role/openshift/karpenter',
  ),
  deleteNodePool: dnsLabel,
  reason: hostileString,
  expiresAt: iso,
  labels,
  spec: nodePoolSpec,
  featureGates: fc.dictionary(
    fc.constantFrom('SpotToSpotConsolidation', 'NodeRepair', 'lower'),
    fc.boolean(),
    { maxKeys: 2 },
  ),
  tags: fc.dictionary(fc.constantFrom('team', 'cost-center', 'kubernetes.io/x'), dnsLabel, {
    maxKeys: 2,
  }),
  kubelet: fc.record({ maxPods: fc.integer({ min: -1, max: 300 }) }, { requiredKeys: [] }),
  metadataOptions: fc.record(
    { httpTokens: fc.constantFrom('required', 'optional', 'sometimes') },
    { requiredKeys: [] },
  ),
  blockDeviceMappings: fc.array(
    fc.record({
      deviceName: fc.constant('/dev/xvda'),
      ebs: fc.record({ volumeSize: fc.constantFrom('20Gi', '100Gi', 'big') }),
    }),
    { maxLength: 1 },
  ),
  expectedGeneration: fc.integer({ min: -1, max: 4 }),
  gracePeriodSeconds: fc.constantFrom(0, 1, 60, -1, 604_801),
  first: fc.integer({ min: -2, max: 120 }),
  last: fc.integer({ min: -2, max: 120 }),
  count: fc.integer({ min: -1, max: 5 }),
  percent: fc.integer({ min: -1, max: 110 }),
  maxFailures: fc.integer({ min: -1, max: 3 }),
  minHealthySeconds: fc.integer({ min: -1, max: 90_000 }),
  waveTimeoutSeconds: fc.integer({ min: 0, max: 100_000 }),
  after: fc.oneof(fc.base64String({ maxLength: 24 }), hostileString),
  before: fc.oneof(fc.base64String({ maxLength: 24 }), hostileString),
  clusterId: fc.constantFrom<Ref>('@cluster', '@cluster', '@cluster', '@cluster-uid'),
  id: fc.constantFrom<Ref>('@cluster', '@rollout', '@rollout', '@token'),
};

/** Anything at all, of any JSON type: what a client that ignores the schema sends. */
const wrongType: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  hostileString,
  fc.constant({}),
  fc.constant([]),
  fc.constant(null),
);

function scalar(typeName: string): fc.Arbitrary<unknown> {
  switch (typeName) {
    case 'Int':
      return fc.oneof(
        fc.integer({ min: -3, max: 200 }),
        fc.constantFrom(2 ** 31 - 1, -(2 ** 31), 2 ** 31, 1.5),
      );
    case 'Float':
      return fc.double();
    case 'Boolean':
      return fc.boolean();
    case 'DateTime':
      return fc.oneof(iso, hostileString, fc.constantFrom('2026-13-45T99:00:00Z', '0'));
    case 'JSON':
      return anyJson;
    case 'ID':
      return fc.oneof(globalId, fc.uuid(), hostileString);
    default:
      return fc.oneof(hostileString, fc.string({ maxLength: 40 }));
  }
}

/** Mostly well-typed values (plausible ones where a hint exists), sometimes anything at all. */
function arbitraryFor(type: GraphQLInputType, name: string, depth = 0): fc.Arbitrary<unknown> {
  if (isNonNullType(type)) {
    return fc.oneof(
      { weight: 30, arbitrary: arbitraryFor(type.ofType, name, depth) },
      { weight: 1, arbitrary: fc.constant(null) },
    );
  }
  const present = presentValue(type, name, depth);
  return fc.oneof(
    { weight: 12, arbitrary: present },
    { weight: 3, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constant(null) },
  );
}

function presentValue(type: GraphQLInputType, name: string, depth: number): fc.Arbitrary<unknown> {
  const typed = ((): fc.Arbitrary<unknown> => {
    if (isListType(type))
      return fc.array(arbitraryFor(type.ofType, name, depth + 1), { maxLength: 4 });
    if (isInputObjectType(type)) {
      const fields = Object.values(type.getFields());
      const record = fc.record(
        Object.fromEntries(fields.map((f) => [f.name, arbitraryFor(f.type, f.name, depth + 1)])),
      );
      return fc.oneof(
        { weight: 8, arbitrary: record },
        {
          weight: 1,
          arbitrary: fc
            .tuple(record, hostileString)
            .map(([r, extra]) => ({ ...(r as object), [extra || 'extra']: 1 })),
        },
      );
    }
    if (isEnumType(type))
      return fc.oneof(
        { weight: 8, arbitrary: fc.constantFrom(...type.getValues().map((v) => v.name)) },
        { weight: 1, arbitrary: hostileString },
      );
    if (isScalarType(type)) {
      const hint = PLAUSIBLE[name];
      return hint
        ? fc.oneof({ weight: 4, arbitrary: hint }, { weight: 1, arbitrary: scalar(type.name) })
        : scalar(type.name);
    }
    throw new Error(`no arbitrary for ${String(type)}`);
  })();
  return fc.oneof({ weight: 15, arbitrary: typed }, { weight: 1, arbitrary: wrongType });
}

/** JSON without undefined (absent) members, as a client would send it. */
const sendable = (value: unknown, refs: Record<Ref, string>): unknown => {
  if (typeof value === 'string' && (REFS as readonly string[]).includes(value))
    return refs[value as Ref];
  if (Array.isArray(value)) return value.map((v) => sendable(v === undefined ? null : v, refs));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => [k, sendable(v, refs)]),
    );
  return value;
};

/** Every key and argument name a message could name. */
const namesIn = (value: unknown, into = new Set<string>()): Set<string> => {
  if (Array.isArray(value)) value.forEach((v) => namesIn(v, into));
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      into.add(k);
      namesIn(v, into);
    }
  return into;
};
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const names = (message: string, name: string) =>
  name.length > 0 && new RegExp(`(^|[^A-Za-z0-9_])${escape(name)}($|[^A-Za-z0-9_])`).test(message);

/** Refusals that describe the input (must name what is wrong) or the state it met. */
const INPUT_CODES = ['BAD_USER_INPUT', 'GRAPHQL_VALIDATION_FAILED'];
const STATE_CODES = ['NOT_FOUND', 'CONFLICT', 'FORBIDDEN'];

interface GqlError {
  message: string;
  extensions?: { code?: string; field?: string; errorId?: string };
}

describe('fuzz: every GraphQL input of the schema', () => {
  let db: TestDatabase;
  let api: FuzzedApi;
  let fingerprint: DatabaseFingerprint;
  let baseline = 0;
  let registered = 0;
  const refs = {} as Record<Ref, string>;
  const prefix = testQueuePrefix();

  const registerMain = async () => {
    const res = await api.admin<{ registerCluster: { cluster: { id: string; uid: string } } }>(
      `mutation($name: String!) { registerCluster(input: { name: $name, topology: STANDALONE, platform: AWS, region: "us-east-1", labels: { fuzz: "main" } }) { cluster { id uid } } }`,
      { name: `fuzz-main-${registered++}` },
    );
    if (!res.data) throw new Error(JSON.stringify(res.errors));
    refs['@cluster'] = res.data.registerCluster.cluster.id;
    refs['@cluster-uid'] = res.data.registerCluster.cluster.uid;
  };

  let rolloutUid = '';
  const startRollout = async () => {
    const rollout = await api.admin<{ startRollout: { id: string } }>(
      `mutation { startRollout(selector: "fuzz=main", change: { enabled: true }) { id } }`,
    );
    if (!rollout.data) throw new Error(JSON.stringify(rollout.errors));
    refs['@rollout'] = rollout.data.startRollout.id;
    rolloutUid = Buffer.from(refs['@rollout'], 'base64url').toString().split(':')[1]!;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startFuzzedApi({
      DATABASE_URL: db.url,
      REDIS_URL,
      QUEUE_PREFIX: prefix,
      RATE_LIMIT_PER_MINUTE: '1000000',
    });
    fingerprint = await DatabaseFingerprint.open(db.url);
    await registerMain();
    await startRollout();
    const token = await api.admin<{ createApiToken: { token: { id: string } } }>(
      `mutation { createApiToken(input: { name: "fuzz-viewer", role: VIEWER }) { token { id } } }`,
    );
    if (!token.data) throw new Error(JSON.stringify(token.errors));
    refs['@token'] = token.data.createApiToken.token.id;
    baseline = api.rssBytes();
  }, 90_000);

  afterAll(async () => {
    const clusters = fingerprint
      ? await fingerprint.sql<{ id: string }>(`SELECT id FROM "Cluster"`).catch(() => [])
      : [];
    await fingerprint?.close();
    await api?.stop();
    const admin = new Redis(REDIS_URL);
    for (const { id } of clusters)
      await admin.call('ACL', 'DELUSER', `sidecar.${id}`).catch(() => undefined);
    admin.disconnect();
    await db?.drop();
  });

  it('fuzzes every input object type of the schema through some root field', () => {
    const reached = new Set<string>();
    for (const { field } of rootFields)
      for (const arg of field.args) for (const t of inputTypesOf(arg.type)) reached.add(t);
    const declared = Object.values(schema.getTypeMap())
      .filter((t) => isInputObjectType(t))
      .map((t) => t.name)
      .sort();
    expect(declared.length).toBeGreaterThan(5);
    expect([...reached].sort()).toEqual(declared);
  });

  const fieldCases = rootFields.map(({ operation, field }) => [
    `${operation} ${field.name}(${field.args.map((a) => a.name).join(', ')})`,
    operation,
    field,
  ]) as [string, 'query' | 'mutation', GraphQLField<unknown, unknown>][];

  it.each(fieldCases)(
    '%s',
    async (what, operation, field) => {
      const args: readonly GraphQLArgument[] = field.args;
      const selection = isScalarType(getNamedType(field.type)) ? '' : ' { __typename }';
      const document =
        `${operation} Fuzz(${args.map((a) => `$${a.name}: ${String(a.type)}`).join(', ')}) ` +
        `{ ${field.name}(${args.map((a) => `${a.name}: $${a.name}`).join(', ')})${selection} }`;
      const variables = fc.record(
        Object.fromEntries(args.map((a) => [a.name, arbitraryFor(a.type, a.name)])),
      );
      await fc.assert(
        fc.asyncProperty(variables, async (generated) => {
          // Earlier runs may have deregistered the cluster the placeholders name.
          const [exists] = await fingerprint.sql(`SELECT 1 FROM "Cluster" WHERE id = $1`, [
            refs['@cluster-uid'],
          ]);
          if (!exists) await registerMain();
          // ...or ended the rollout they name, after which steering it is only ever a CONFLICT.
          const [rollout] = await fingerprint.sql<{ state: string }>(
            `SELECT state FROM "Rollout" WHERE id = $1`,
            [rolloutUid],
          );
          if (!['RUNNING', 'PAUSED'].includes(rollout?.state ?? '')) await startRollout();
          const sent = sendable(generated, refs) as Record<string, unknown>;
          const audits = async () =>
            (
              await fingerprint.sql<{ n: number }>(
                `SELECT count(*)::int AS n FROM "AuditEvent" WHERE action = $1`,
                [field.name],
              )
            )[0]!.n;
          const before = await fingerprint.take();
          const auditedBefore = await audits();
          const res = await fetch(`${api.url}/graphql`, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              authorization: `Bearer ${api.adminToken}`,
            },
            body: JSON.stringify({ query: document, variables: sent }),
            signal: AbortSignal.timeout(10_000),
          });
          const text = await res.text();
          const body = JSON.parse(text) as {
            data?: Record<string, unknown> | null;
            errors?: GqlError[];
          };
          const changed = DatabaseFingerprint.changed(before, await fingerprint.take());

          if (body.errors?.length) {
            const mentioned = new Set([...args.map((a) => a.name), ...namesIn(sent)]);
            for (const error of body.errors) {
              const code = error.extensions?.code ?? '(none)';
              // An internal error carries an id the API logged its cause under: show it.
              const cause = error.extensions?.errorId
                ? api.process
                    .output()
                    .split('\n')
                    .filter((l) => l.includes(error.extensions!.errorId!))
                    .join('\n')
                    .slice(0, 2_000)
                : '';
              expect({ code, cause }).toEqual({
                code: expect.stringMatching(
                  new RegExp(`^(${[...INPUT_CODES, ...STATE_CODES].join('|')})$`),
                ),
                cause: '',
              });
              if (INPUT_CODES.includes(code)) {
                const said = `${error.message} ${error.extensions?.field ?? ''}`;
                expect({
                  message: error.message,
                  namesAField: [...mentioned].some((n) => names(said, n)),
                }).toEqual({
                  message: error.message,
                  namesAField: true,
                });
              }
            }
            expect(body.data?.[field.name] ?? null).toBeNull();
            expect({ written: changed }).toEqual({ written: [] });
          } else {
            expect(res.status).toBe(200);
            expect(body.data?.[field.name]).not.toBeNull();
            if (operation === 'query') expect({ written: changed }).toEqual({ written: [] });
            // Every accepted mutation is on the audit trail, whatever it changed.
            else expect({ audited: (await audits()) > auditedBefore }).toEqual({ audited: true });
          }
          expect(await api.healthy()).toBe(true);
        }),
        fuzzParameters(RUNS_PER_FIELD, what),
      );
      expect(api.rssBytes() - baseline).toBeLessThan(200 * 1024 * 1024);
    },
    60_000,
  );
});
