import { describe, expect, it } from '@jest/globals';
import { loadCrdValidator } from './crd-validator.js';
import { CRDS_DIR } from '@fleet/testing';

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

describe('CRD validator (test support)', () => {
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
        'spec: must NOT have additional properties (unknownField)',
        "spec: must have required property 'subnetSelectorTerms'",
        'spec.amiFamily: must be equal to one of the allowed values',
        'spec.amiSelectorTerms.0.id: must match pattern "ami-[0-9a-z]+"',
      ]),
    );
  });

  it('evaluates CEL rules', () => {
    const { errors } = validator.validate({
      ...valid,
      spec: { ...valid.spec, role: 'r', tags: { 'kubernetes.io/cluster/x': 'owned' } },
    });
    expect(errors).toEqual([
      "spec: must specify exactly one of ['role', 'instanceProfile']",
      'spec.tags: tag contains a restricted tag matching kubernetes.io/cluster/',
    ]);
  });
});
