export * from './ops-server.js';
export * from './metrics.js';
