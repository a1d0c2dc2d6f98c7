export * from './types.js';
export * from './cluster-reader.js';
export * from './aws/index.js';
export * from './rest-client.js';
export * from './cluster-api/index.js';
export * from './hosted/index.js';
export * from './azure/index.js';
export * from './openshift/worker-kubelet.js';
