import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { createFleetClient, PREFETCH_FRESH_MS, type FleetClient } from './client.js';
import { ClustersDocument, ViewerDocument } from './generated.js';
import { clustersQueryVariables, parseClusterListState } from '../lib/url-state.js';

type Answer = { status?: number; body: unknown };

/** The console's client against a stand-in fetch that answers in order and records each ask. */
function setUp(answers: Answer[]) {
  const asked: { query: string; variables: unknown; authorization: string }[] = [];
  const fetchStub = jest.fn((_url: string, init: RequestInit) => {
    const body = JSON.parse(init.body as string) as { query: string; variables: unknown };
    asked.push({
      ...body,
      authorization: (init.headers as Record<string, string>).authorization!,
    });
    const answer = answers.shift() ?? { body: { errors: [{ message: 'no answer left' }] } };
    return Promise.resolve(
      new Response(JSON.stringify(answer.body), { status: answer.status ?? 200 }),
    );
  });
  Object.assign(globalThis, {
    window: { location: { href: 'http://console.test/clusters' } },
    fetch: fetchStub,
  });
  const signedOut = jest.fn();
  const client = createFleetClient('secret', signedOut);
  return { client, asked, signedOut };
}

const firstPage = clustersQueryVariables(parseClusterListState(''));
const page = { clusters: { nodes: [], totalCount: 0 } };

describe('the console client fetching ahead', () => {
  const realFetch = globalThis.fetch;
  let client: FleetClient | undefined;
  afterEach(() => {
    client?.close();
    Object.assign(globalThis, { fetch: realFetch });
    Reflect.deleteProperty(globalThis, 'window');
  });

  it('sends the query at once and hands its answer to the first asker of the same query, once', async () => {
    const set = setUp([{ body: { data: page } }, { body: { data: page } }]);
    client = set.client;
    client.prefetch(ClustersDocument, firstPage);
    expect(set.asked).toHaveLength(1);
    expect(set.asked[0]).toMatchObject({ variables: firstPage, authorization: 'Bearer secret' });
    expect(set.asked[0]!.query).toContain('query Clusters(');

    // The same variables built again (a new object, as the page builds them) find it.
    const taken = client.takePrefetched(
      ClustersDocument,
      clustersQueryVariables(parseClusterListState('')),
    );
    await expect(taken).resolves.toEqual(page);
    expect(set.asked).toHaveLength(1);
    // Once: the next asker gets nothing and sends its own request.
    expect(client.takePrefetched(ClustersDocument, firstPage)).toBeUndefined();
  });

  it('hands nothing to another query or other variables', () => {
    const set = setUp([{ body: { data: page } }]);
    client = set.client;
    client.prefetch(ClustersDocument, firstPage);
    expect(client.takePrefetched(ViewerDocument, {})).toBeUndefined();
    const sorted = clustersQueryVariables(parseClusterListState('?sort=CREATED_AT'));
    expect(client.takePrefetched(ClustersDocument, sorted)).toBeUndefined();
    // Still there for the asker it was meant for.
    expect(client.takePrefetched(ClustersDocument, firstPage)).toBeDefined();
  });

  it('hands nothing once the answer is older than PREFETCH_FRESH_MS', () => {
    const set = setUp([{ body: { data: page } }]);
    client = set.client;
    const now = Date.now();
    const clock = jest.spyOn(Date, 'now').mockReturnValue(now);
    try {
      client.prefetch(ClustersDocument, firstPage);
      clock.mockReturnValue(now + PREFETCH_FRESH_MS + 1);
      expect(client.takePrefetched(ClustersDocument, firstPage)).toBeUndefined();
    } finally {
      clock.mockRestore();
    }
  });

  it('ends the session when the API refuses the token, taken or not', async () => {
    const set = setUp([
      { body: { errors: [{ message: 'token revoked', extensions: { code: 'UNAUTHENTICATED' } }] } },
    ]);
    client = set.client;
    client.prefetch(ClustersDocument, firstPage);
    // Nobody takes it (the page is never shown): the refusal still signs out, and is no
    // unhandled rejection.
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(set.signedOut).toHaveBeenCalledTimes(1);
  });

  it('passes a refusal to the page that takes the answer', async () => {
    const set = setUp([
      { body: { errors: [{ message: 'bad selector', extensions: { code: 'BAD_USER_INPUT' } }] } },
    ]);
    client = set.client;
    client.prefetch(ClustersDocument, firstPage);
    await expect(client.takePrefetched(ClustersDocument, firstPage)).rejects.toThrow(
      'bad selector',
    );
    expect(set.signedOut).not.toHaveBeenCalled();
  });
});
