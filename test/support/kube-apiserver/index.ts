export {
  KubeApiServerEmulator,
  readYamlDir,
  readYamlFile,
  type DeleteOptions,
  type EmulatorUser,
  type FieldValidation,
  type InProcessClient,
  type KubeApiServerEmulatorOptions,
  type KubeObject,
  type ListOptions,
  type PatchType,
  type RequestLogEntry,
  type WatchEventType,
  type WatchOptions,
  type WriteOptions,
  type WriteResult,
} from './emulator.js';
export type { Attributes, AuthorizationDecision, PolicyRule } from './authorization.js';
export { ApiError, type StatusCause, type StatusObject } from './errors.js';
export type { CelCompileFailure } from '@fleet/crd-schema';
export type { JSONSchemaProps } from '@fleet/crd-schema';
