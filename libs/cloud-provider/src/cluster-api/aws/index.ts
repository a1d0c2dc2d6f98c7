export * from './capacity.js';
export * from './infrastructure.js';
