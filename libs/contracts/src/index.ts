export * from './desired-state.js';
export * from './messages.js';
