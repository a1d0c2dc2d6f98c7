export * from './change.js';
export * from './commit.js';
export * from './events.js';
export * from './health.js';
export * from './reconcile-job.js';
export * from './wave-plan.js';
export * from './profiles.js';
export * from './profile-store.js';
