export * from './types.js';
export * from './cluster-reader.js';
export * from './aws/index.js';
