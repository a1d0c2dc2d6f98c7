export * from './desired-state.js';
export * from './messages.js';
export * from './env.js';
export * from './label-selector.js';
