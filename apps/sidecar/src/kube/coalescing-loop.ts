/**
 * Runs one pass at a time for a watch-driven controller: events arriving during a pass coalesce
 * into exactly one more pass, so a burst of watch events costs two passes, not one per event.
 */
export class CoalescingLoop {
  private running?: Promise<void>;
  private again = false;
  private stopped = false;

  constructor(
    private readonly pass: () => Promise<void>,
    private readonly onError: (err: unknown) => void,
  ) {}

  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          await this.pass();
        } catch (err) {
          this.onError(err);
        }
      } while (this.again && !this.stopped);
      this.running = undefined;
    })();
  }

  /** Resolves when the pass in progress (if any) and any it queued have finished. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  stop(): void {
    this.stopped = true;
  }
}
