import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export interface HeapTrimmerOptions {
  /** How often the heap is looked at. */
  intervalMs: number;
  /** Growth over the last live size that is worth a full collection. */
  slackBytes: number;
  /** Defaults: V8's own heap figure and a full collection. */
  heapUsed?: () => number;
  collect?: () => void;
}

let fullCollection: (() => void) | undefined;

/** V8's full collection, without starting node with --expose-gc (NODE_OPTIONS does not take it). */
export function v8FullCollection(): () => void {
  if (!fullCollection) {
    setFlagsFromString('--expose-gc');
    fullCollection = runInNewContext('gc') as () => void;
  }
  return fullCollection;
}

/**
 * A sidecar works in bursts (an order, a wave of nodes joining) and then rests for hours. V8
 * collects its old generation under allocation pressure, which a resting sidecar does not create,
 * so a burst's garbage stayed resident: ~100 MB of heap at rest against ~45 MB live
 * (docs/PERFORMANCE.md). Every interval, when the heap has grown by more than the slack since it
 * was last found live, one full collection brings it back: at most one per interval, and none
 * while the heap does not grow.
 */
export class HeapTrimmer {
  private live: number;
  private timer: NodeJS.Timeout | undefined;
  private readonly heapUsed: () => number;
  private readonly collect: () => void;
  collections = 0;

  constructor(private readonly options: HeapTrimmerOptions) {
    this.heapUsed = options.heapUsed ?? (() => process.memoryUsage().heapUsed);
    this.collect = options.collect ?? v8FullCollection();
    this.live = this.heapUsed();
  }

  start(): void {
    this.timer ??= setInterval(() => this.check(), this.options.intervalMs).unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Collects when the heap has outgrown its last live size by the slack; true if it did. */
  check(): boolean {
    if (this.heapUsed() - this.live <= this.options.slackBytes) return false;
    this.collect();
    this.collections++;
    this.live = this.heapUsed();
    return true;
  }
}
