import { RealControlPlane } from '../support/control-plane/control-plane.js';
import { fixtureCrdFiles } from '../support/fixtures.js';
import { describeKubectlConformance } from '../support/kube-apiserver/kubectl-conformance.js';

// The kubectl cases of test/support/kube-apiserver/kubectl.e2e-spec.ts, against a real
// kube-apiserver (etcd, kube-controller-manager and kube-scheduler beside it) with the same CRDs.
describeKubectlConformance('kubectl against a real kube-apiserver', async () => {
  const plane = await RealControlPlane.start({ name: 'kubectl' });
  try {
    await plane.installCrds(fixtureCrdFiles());
  } catch (err) {
    await plane.stop();
    throw err;
  }
  return {
    adminKubeconfigYaml: () => plane.kubeconfigYaml(),
    userKubeconfigYaml: (user) => plane.kubeconfigYaml(plane.ca.issueClient(user), user),
    get: (apiVersion, kind, name, namespace) => plane.get(apiVersion, kind, name, namespace),
    create: async (...objects) => {
      await plane.create(...objects);
    },
    patch: async (apiVersion, kind, name, namespace, patch, type = 'merge') => {
      await plane.patch(apiVersion, kind, name, namespace, patch, type);
    },
    patchStatus: async (apiVersion, kind, name, status) => {
      await plane.patch(apiVersion, kind, name, undefined, { status }, 'merge', 'status');
    },
    stop: () => plane.stop(),
  };
});
