import { queueName } from '@fleet/contracts';
/** The BullMQ queue whose job scheduler ticks the running rollouts (see docs/ROLLOUTS.md). */
export const ROLLOUT_QUEUE = queueName('rollouts');
