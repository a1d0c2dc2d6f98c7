export * from './constants.js';
export * from './infrastructure.js';
export * from './machine-deployments.js';
export * from './aws/index.js';
export * from './operand.js';
export * from './cluster-autoscaler.js';
export * from './admission.js';
export * from './node-identity.js';
