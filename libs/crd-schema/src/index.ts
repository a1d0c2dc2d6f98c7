// TEMPORARY while the emulator's schema code settles; moved here before commit.
export { StructuralSchema } from '../../../test/support/kube-apiserver/schema.js';
export { loadCrdSchema } from './load.js';
