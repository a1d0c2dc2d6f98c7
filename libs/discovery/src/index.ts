export * from './types.js';
export * from './cluster-reader.js';
export * from './infrastructure.js';
export * from './machinesets.js';
export * from './aws-standalone.js';
