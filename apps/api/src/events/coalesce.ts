/**
 * Turns a stream of "something changed" signals into at most one tick per interval. The source
 * is drained continuously, so a burst never piles up behind a slow consumer.
 */
export async function* coalesce(
  source: AsyncIterator<unknown>,
  intervalMs: number,
): AsyncGenerator<void> {
  let dirty = false;
  let done = false;
  let wake: (() => void) | undefined;
  void (async () => {
    for (;;) {
      const next = await source.next();
      if (next.done) break;
      dirty = true;
      wake?.();
    }
    done = true;
    wake?.();
  })();
  try {
    for (;;) {
      if (!dirty && !done) await new Promise<void>((resolve) => (wake = resolve));
      if (done && !dirty) return;
      dirty = false;
      yield;
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  } finally {
    await source.return?.();
  }
}
