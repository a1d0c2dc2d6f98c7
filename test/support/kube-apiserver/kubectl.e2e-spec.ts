import { fixtureCrdFiles } from '../fixtures.js';
import { KubeApiServerEmulator, type KubeObject } from './index.js';
import type { JsonObject } from './util.js';
import { describeKubectlConformance } from './kubectl-conformance.js';

// The kubectl cases against the emulator; test/real-kubernetes/kubectl.real-spec.ts runs the same
// cases against a real kube-apiserver.
describeKubectlConformance('kubectl against the emulator', async () => {
  const em = new KubeApiServerEmulator();
  await em.start();
  em.loadCrdFiles(fixtureCrdFiles());
  return {
    adminKubeconfigYaml: () => em.kubeconfigYaml(),
    userKubeconfigYaml: (user) =>
      em.kubeconfigYaml('default', em.addUser(user, ['system:authenticated'])),
    get: (apiVersion, kind, name, namespace) =>
      Promise.resolve(em.get(apiVersion, kind, name, namespace)),
    create: (...objects: KubeObject[]) => {
      for (const object of objects) em.create(object);
      return Promise.resolve();
    },
    patch: (apiVersion, kind, name, namespace, patch, type = 'merge') => {
      em.patch(apiVersion, kind, name, namespace, patch, type);
      return Promise.resolve();
    },
    patchStatus: (apiVersion, kind, name, status) => {
      em.patchStatus(apiVersion, kind, name, undefined, status as JsonObject);
      return Promise.resolve();
    },
    revision: () => em.resourceVersion,
    stop: () => em.stop(),
  };
});
