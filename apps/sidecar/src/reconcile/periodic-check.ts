import type { Logger } from 'pino';

export interface PeriodicCheckOptions {
  /** Time between the end of one check and the start of the next. */
  intervalMs: number;
  /** Whether the work is due now; a throw is logged and the next check comes as usual. */
  due: () => Promise<boolean>;
  /** The work, when due. */
  run: () => Promise<void>;
  log: Logger;
  /** What is checked, for the log. */
  what: string;
}

/**
 * A check on a timer, for what falls due with time rather than with an event (the operand's
 * management token, renewed once half its life is gone). One check at a time: the next is
 * scheduled when the previous one ends, so a slow API server never piles them up. The timer is
 * unref'd and cleared by stop(), so it never holds the process open.
 */
export class PeriodicCheck {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = true;

  constructor(private readonly options: PeriodicCheckOptions) {
    if (!Number.isFinite(options.intervalMs) || options.intervalMs <= 0)
      throw new Error(`${options.what}: intervalMs must be a positive number of milliseconds`);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule();
  }

  /** Clears the timer and waits for a check in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.check().finally(() => {
        this.running = undefined;
        this.schedule();
      });
    }, this.options.intervalMs);
    this.timer.unref();
  }

  private async check(): Promise<void> {
    const { due, run, log, what } = this.options;
    try {
      if (!(await due())) return;
      log.info({ what }, 'due: running the periodic work');
      await run();
    } catch (err) {
      log.error({ what, err: String(err) }, 'periodic check failed; trying again next interval');
    }
  }
}
