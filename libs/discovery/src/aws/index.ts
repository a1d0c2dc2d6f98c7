export * from './types.js';
export * from './infrastructure.js';
export * from './machinesets.js';
export * from './standalone.js';
export * from './proxy.js';
export * from './credentials-mode.js';
