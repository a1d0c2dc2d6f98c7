export * from './kinds.js';
export * from './types.js';
export * from './discover.js';
export * from './aws/index.js';
