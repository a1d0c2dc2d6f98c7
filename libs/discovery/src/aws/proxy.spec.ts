import { describe, expect, it } from '@jest/globals';
import { parseClusterProxy } from './proxy.js';

const proxy = (spec: unknown, status: unknown) => ({
  apiVersion: 'config.openshift.io/v1',
  kind: 'Proxy',
  metadata: { name: 'cluster' },
  spec,
  status,
});

describe('parseClusterProxy', () => {
  it('takes the URLs and noProxy from status, the Cluster Network Operator completed view', () => {
    expect(
      parseClusterProxy(
        proxy(
          { httpsProxy: 'http://spec:3128', noProxy: '.corp', trustedCA: { name: 'user-ca' } },
          { httpsProxy: 'http://status:3128', noProxy: '.corp,.svc,169.254.169.254' },
        ),
      ),
    ).toEqual({
      ok: true,
      value: {
        httpsProxy: 'http://status:3128',
        noProxy: '.corp,.svc,169.254.169.254',
        trustedCA: 'user-ca',
      },
    });
  });

  it('no proxy: the object absent, or present and empty as on most clusters', () => {
    expect(parseClusterProxy(undefined)).toEqual({ ok: true, value: undefined });
    expect(parseClusterProxy(proxy({ trustedCA: { name: '' } }, {}))).toEqual({
      ok: true,
      value: undefined,
    });
  });

  it('a malformed Proxy is refused, naming the field', () => {
    expect(parseClusterProxy(proxy({}, { httpsProxy: 3128 }))).toMatchObject({
      ok: false,
      reason: 'InvalidProxy',
      message: expect.stringMatching(/^Proxy cluster: .*status\.httpsProxy/),
    });
  });
});
