import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OPERAND_NAME, OPERAND_NAMESPACE } from '@fleet/cloud-provider';
import type { KubeObject } from '../support/kube-apiserver/index.js';
import { GENERAL_NODEPOOL, startHarness, until, type Harness } from './harness.js';

const PROXY = ['config.openshift.io/v1', 'Proxy', 'cluster'] as const;
const BUNDLE = ['v1', 'ConfigMap', 'trusted-ca-bundle', OPERAND_NAMESPACE] as const;
const CA_FILE = '/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem';
// What the Cluster Network Operator writes to status: the admin's noProxy completed with the
// cluster's own networks, the API server and the instance metadata service.
const STATUS_NO_PROXY =
  '.cluster.local,.svc,.us-east-1.compute.internal,10.0.0.0/16,10.128.0.0/14,127.0.0.1,169.254.169.254,172.30.0.0/16,api-int.ocp-east.example.com,localhost,s3.us-east-1.amazonaws.com';

type Env = { name: string; value?: string }[];
interface OperandDeployment extends KubeObject {
  spec: {
    template: {
      spec: {
        containers: { env: Env; volumeMounts: { name: string; mountPath: string }[] }[];
        volumes: { name: string; configMap?: unknown }[];
      };
    };
  };
}

describe('standalone AWS: the cluster-wide Proxy reaches the operand and is followed', () => {
  let h: Harness;
  const deployment = () =>
    h.cluster.kube.get('apps/v1', 'Deployment', OPERAND_NAME, OPERAND_NAMESPACE) as
      OperandDeployment | undefined;
  const env = (): Record<string, string | undefined> =>
    Object.fromEntries(
      (deployment()?.spec.template.spec.containers[0]?.env ?? []).map((e) => [e.name, e.value]),
    );
  const setProxyStatus = (status: Record<string, string>) => {
    const proxy = h.cluster.kube.get(...PROXY)!;
    h.cluster.kube.updateStatus({ ...proxy, status });
  };

  beforeAll(async () => {
    h = await startHarness();
    // As the admin configures it (spec) and the Cluster Network Operator completes it (status).
    h.cluster.kube.create({
      apiVersion: PROXY[0],
      kind: PROXY[1],
      metadata: { name: PROXY[2] },
      spec: {
        httpProxy: 'http://proxy.corp.example.com:3128',
        httpsProxy: 'http://proxy.corp.example.com:3128',
        noProxy: '.corp.example.com',
        trustedCA: { name: 'user-ca-bundle' },
      },
    });
    setProxyStatus({
      httpProxy: 'http://proxy.corp.example.com:3128',
      httpsProxy: 'http://proxy.corp.example.com:3128',
      noProxy: `.corp.example.com,${STATUS_NO_PROXY}`,
    });
  });
  afterAll(async () => h?.stop());

  it('puts the Proxy status and the injected trusted CA bundle into the operand', async () => {
    const result = await h.runtime.apply(h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL] }));
    expect(result.conditions.find((c) => c.type === 'Degraded')).toMatchObject({
      status: 'False',
    });
    expect(env()).toMatchObject({
      HTTP_PROXY: 'http://proxy.corp.example.com:3128',
      HTTPS_PROXY: 'http://proxy.corp.example.com:3128',
      // status, not spec: the completed list keeps IMDS and the API server off the proxy.
      NO_PROXY: `.corp.example.com,${STATUS_NO_PROXY}`,
      AWS_CA_BUNDLE: CA_FILE,
    });
    expect(h.cluster.kube.get(...BUNDLE)?.metadata?.labels).toMatchObject({
      'config.openshift.io/inject-trusted-cabundle': 'true',
    });
    const pod = deployment()!.spec.template.spec;
    expect(pod.volumes).toContainEqual({
      name: 'trusted-ca-bundle',
      configMap: {
        name: 'trusted-ca-bundle',
        items: [{ key: 'ca-bundle.crt', path: 'tls-ca-bundle.pem' }],
        defaultMode: 0o644, // the API server's default
      },
    });
    expect(pod.containers[0]!.volumeMounts).toContainEqual({
      name: 'trusted-ca-bundle',
      mountPath: '/etc/pki/ca-trust/extracted/pem',
      readOnly: true,
    });
  });

  it('leaves the bundle the Cluster Network Operator injected alone when applying again', async () => {
    const bundle = h.cluster.kube.get(...BUNDLE)!;
    h.cluster.kube.update(
      { ...bundle, data: { 'ca-bundle.crt': '-----BEGIN CERTIFICATE-----\n...' } },
      { fieldManager: 'cluster-network-operator' },
    );
    await h.runtime.apply(h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL] }));
    expect(h.cluster.kube.get(...BUNDLE)?.data).toEqual({
      'ca-bundle.crt': '-----BEGIN CERTIFICATE-----\n...',
    });
  });

  it('follows a change of the Proxy without a new order', async () => {
    const generation = h.runtime.lastResult()!.generation;
    setProxyStatus({
      httpProxy: 'http://proxy2.corp.example.com:3128',
      httpsProxy: 'http://proxy2.corp.example.com:3128',
      noProxy: STATUS_NO_PROXY,
    });
    await until(
      () => env().HTTPS_PROXY === 'http://proxy2.corp.example.com:3128' || undefined,
      'the operand to get the new proxy',
    );
    expect(env()).toMatchObject({
      HTTP_PROXY: 'http://proxy2.corp.example.com:3128',
      NO_PROXY: STATUS_NO_PROXY,
    });
    await h.runtime.idle();
    expect(h.runtime.lastResult()!.generation).toBe(generation);
  });

  it('removes the proxy settings and the bundle once the Proxy is cleared', async () => {
    const proxy = h.cluster.kube.get(...PROXY)!;
    h.cluster.kube.update({ ...proxy, spec: {} });
    setProxyStatus({});
    await until(
      () => (env().HTTP_PROXY === undefined && !h.cluster.kube.get(...BUNDLE)) || undefined,
      'the proxy settings and the bundle to be removed',
    );
    await h.runtime.idle();
    expect(Object.keys(env())).not.toEqual(
      expect.arrayContaining([expect.stringMatching(/PROXY|AWS_CA_BUNDLE/)]),
    );
    const pod = deployment()!.spec.template.spec;
    expect(pod.volumes.map((v) => v.name)).not.toContain('trusted-ca-bundle');
    expect(
      h.runtime.lastResult()!.result.conditions.find((c) => c.type === 'Degraded'),
    ).toMatchObject({ status: 'False' });
  });
});
