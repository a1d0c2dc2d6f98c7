import { test } from '@jest/globals';
import { KubeApiServerEmulator } from './index.js';
test('smoke', () => {
const em = new KubeApiServerEmulator();
em.loadCrdsFromDir('/work/shared/fixtures/crds');
const objs = em.seedFromDir('/work/shared/fixtures/clusters');
console.log('seeded', objs.length);
try {
  em.create({ apiVersion: 'karpenter.sh/v1', kind: 'NodePool', metadata: { name: 'np' }, spec: { weight: 0, template: { spec: { requirements: [{ key: 'kubernetes.io/hostname', operator: 'Foo', values: [] }], nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass' } } } } });
} catch (e) { console.log(JSON.stringify((e as any).toStatus(), null, 1)); }
const np = em.create({ apiVersion: 'karpenter.sh/v1', kind: 'NodePool', metadata: { name: 'ok' }, spec: { foo: 1, template: { spec: { requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }], nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' } } } } });
console.log(JSON.stringify(np, null, 1));
});
