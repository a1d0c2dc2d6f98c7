export * from './desired-state.js';
export * from './messages.js';
export * from './env.js';
export * from './label-selector.js';
export * from './sidecar-credentials.js';
export * from './dead-letters.js';
export * from './kinds.js';
export * from './release.js';
