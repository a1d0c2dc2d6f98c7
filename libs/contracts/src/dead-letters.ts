import { z } from 'zod';
import { queueName } from './messages.js';

/** Jobs that exhausted their attempts, kept (never consumed) until an admin redrives them. */
export const DEAD_LETTER_QUEUE = queueName('dead-letter');

export const DeadLetter = z.object({
  /** The queue the job failed on, where a redrive puts it back. */
  queue: z.string(),
  jobId: z.string(),
  name: z.string(),
  data: z.unknown(),
  attempts: z.number().int().nonnegative(),
  attemptsMade: z.number().int().nonnegative(),
  failedReason: z.string(),
  failedAt: z.iso.datetime(),
});
export type DeadLetter = z.infer<typeof DeadLetter>;
