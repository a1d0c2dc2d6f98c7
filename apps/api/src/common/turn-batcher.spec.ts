import { TurnBatcher } from './turn-batcher.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('TurnBatcher', () => {
  it('sends what arrives in one turn as one batch, and answers each item in order', async () => {
    const batches: number[][] = [];
    const batcher = new TurnBatcher<number, string>(10, (items) => {
      batches.push(items);
      return Promise.resolve(items.map((n) => `answer ${n}`));
    });
    const answers = Promise.all([batcher.add(1), batcher.add(2), batcher.add(3)]);
    expect(batches).toEqual([]); // nothing leaves before the turn is over
    await expect(answers).resolves.toEqual(['answer 1', 'answer 2', 'answer 3']);
    expect(batches).toEqual([[1, 2, 3]]);

    await Promise.all([batcher.add(4), nextTurn().then(() => batcher.add(5))]);
    expect(batches).toEqual([[1, 2, 3], [4], [5]]);
  });

  it('splits a turn with more than maxBatch items into batches of at most maxBatch', async () => {
    const batches: number[][] = [];
    const batcher = new TurnBatcher<number, number>(2, (items) => {
      batches.push(items);
      return Promise.resolve(items.map((n) => n * 10));
    });
    await expect(Promise.all([1, 2, 3, 4, 5].map((n) => batcher.add(n)))).resolves.toEqual([
      10, 20, 30, 40, 50,
    ]);
    expect(batches).toEqual([[1, 2], [3, 4], [5]]);
  });

  it("fails every item of a failed batch with its error, and only that batch's", async () => {
    const batcher = new TurnBatcher<number, number>(2, (items) =>
      items.includes(3) ? Promise.reject(new Error('redis away')) : Promise.resolve(items),
    );
    const outcomes = await Promise.allSettled([1, 2, 3, 4].map((n) => batcher.add(n)));
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : String(o.reason)))).toEqual([
      1,
      2,
      'Error: redis away',
      'Error: redis away',
    ]);
  });

  it('fails the batch when send throws instead of rejecting', async () => {
    const batcher = new TurnBatcher<number, number>(4, () => {
      throw new Error('not connected');
    });
    await expect(batcher.add(1)).rejects.toThrow('not connected');
  });

  it('fails the items a batch left unanswered', async () => {
    const batcher = new TurnBatcher<number, number>(4, (items) => Promise.resolve(items.slice(1)));
    const outcomes = await Promise.allSettled([batcher.add(1), batcher.add(2)]);
    expect(outcomes[0]).toEqual({ status: 'fulfilled', value: 2 });
    expect(outcomes[1]).toMatchObject({ status: 'rejected' });
    expect(String((outcomes[1] as PromiseRejectedResult).reason)).toContain('answered 1 of 2');
  });
});
