export * from './causes.js';
export * from './json.js';
export * from './cel.js';
export * from './schema.js';
export { loadCrdSchema } from './load.js';
export { KARPENTER_CRD_DIRECTORY, UPSTREAM_CRD_DIRECTORY } from './upstream.js';
