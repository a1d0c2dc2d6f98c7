import { describe, expect, it } from '@jest/globals';
import { loadCrdValidator } from './crd-validation.js';
import { CRDS_DIR } from './fixtures.js';

const validator = loadCrdValidator(`${CRDS_DIR}karpenter/karpenter.k8s.aws_ec2nodeclasses.yaml`);
const valid = {
  apiVersion: 'karpenter.k8s.aws/v1',
  kind: 'EC2NodeClass',
  metadata: { name: 'x' },
  spec: {
    amiFamily: 'Custom',
    amiSelectorTerms: [{ id: 'ami-0123' }],
    instanceProfile: 'p',
    subnetSelectorTerms: [{ id: 'subnet-0123' }],
    securityGroupSelectorTerms: [{ id: 'sg-0123' }],
  },
};

describe('CRD validation (test support over @fleet/crd-schema)', () => {
  it('accepts a valid object', () => {
    expect(validator.validate(valid).errors).toEqual([]);
  });

  it('rejects unknown fields, bad enums, bad patterns and missing required fields', () => {
    const { errors } = validator.validate({
      ...valid,
      spec: {
        ...valid.spec,
        amiFamily: 'RHCOS',
        amiSelectorTerms: [{ id: 'not-an-ami' }],
        subnetSelectorTerms: undefined,
        unknownField: true,
      },
    });
    expect(errors).toEqual(
      expect.arrayContaining([
        'spec.unknownField: unknown field "spec.unknownField"',
        'spec.subnetSelectorTerms: Required value',
        expect.stringMatching(/^spec\.amiFamily: Unsupported value: "RHCOS": supported values: /),
        `spec.amiSelectorTerms[0].id: Invalid value: "not-an-ami": spec.amiSelectorTerms[0].id in body should match 'ami-[0-9a-z]+'`,
      ]),
    );
  });

  it('evaluates CEL rules', () => {
    const { errors } = validator.validate({
      ...valid,
      spec: { ...valid.spec, role: 'r', tags: { 'kubernetes.io/cluster/x': 'owned' } },
    });
    expect(errors).toEqual([
      `spec: Invalid value: "object": must specify exactly one of ['role', 'instanceProfile']`,
      'spec.tags: Invalid value: "object": tag contains a restricted tag matching kubernetes.io/cluster/',
    ]);
  });
});
