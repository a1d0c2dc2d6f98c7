import { describe, expect, it } from '@jest/globals';

import { productGrants, requestable, requestGrant, scriptGrants } from './differential-coverage.js';
import { ACCEPTED_DIFFERENCES } from './differential-accepted.js';
import { DIFFERENTIAL_SCRIPTS } from './differential-scripts.js';

describe('the differential scripts cover what the product is granted', () => {
  it('reads a request as kube-apiserver authorizes it', () => {
    expect(requestGrant('GET', '/api/v1/namespaces/default/pods')).toBe('list /pods');
    expect(requestGrant('GET', '/api/v1/pods?watch=1&resourceVersion=5')).toBe('watch /pods');
    expect(requestGrant('GET', '/api/v1/nodes/a')).toBe('get /nodes');
    expect(requestGrant('PUT', '/apis/apps/v1/namespaces/x/deployments/d/scale')).toBe(
      'update apps/deployments/scale',
    );
    expect(requestGrant('DELETE', '/apis/karpenter.sh/v1/nodepools')).toBe(
      'deletecollection karpenter.sh/nodepools',
    );
    expect(requestGrant('GET', '/openapi/v3')).toBeUndefined();
  });

  it('no role of the product is granted a request whose differences are accepted', async () => {
    const grants = await productGrants();
    expect(ACCEPTED_DIFFERENCES.filter((d) => grants.has(d.request))).toEqual([]);
  });

  it('every (verb, resource) of deploy/ and the rendered operand roles has a script', async () => {
    const covered = scriptGrants(DIFFERENTIAL_SCRIPTS);
    const missing = [...(await productGrants()).keys()]
      .filter((grant) => !covered.has(grant) && requestable(grant))
      .sort();
    expect(missing).toEqual([]);
  });
});
