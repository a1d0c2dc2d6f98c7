/**
 * Collects what arrives in one turn of the event loop and sends it as one batch once the turn is
 * over (issue 48: a Redis command, its reply and their promises per request were the hot paths'
 * largest cost after parsing; the requests that arrive together now share one script). A batch
 * holds at most `maxBatch` items, so one command keeps Redis busy for a bounded time; a turn with
 * more sends several. `send` answers each item in order; when it fails, every item of its batch
 * fails with the same error.
 */
export class TurnBatcher<Item, Answer> {
  private readonly pending: {
    item: Item;
    resolve(answer: Answer): void;
    reject(err: unknown): void;
  }[] = [];

  constructor(
    private readonly maxBatch: number,
    private readonly send: (items: Item[]) => Promise<readonly Answer[]>,
  ) {}

  add(item: Item): Promise<Answer> {
    return new Promise((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.pending.length === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, this.maxBatch);
      // A send that throws instead of rejecting fails its batch the same way.
      new Promise<readonly Answer[]>((resolve) =>
        resolve(this.send(batch.map((p) => p.item))),
      ).then(
        (answers) => {
          batch.forEach((p, i) => {
            if (i < answers.length) p.resolve(answers[i]!);
            else p.reject(new Error(`batch answered ${answers.length} of ${batch.length} items`));
          });
        },
        (err: unknown) => batch.forEach((p) => p.reject(err)),
      );
    }
  }
}
