export * from './types.js';
export * from './infrastructure.js';
export * from './machinesets.js';
export * from './credentials.js';
export * from './standalone.js';
export * from './arm.js';
