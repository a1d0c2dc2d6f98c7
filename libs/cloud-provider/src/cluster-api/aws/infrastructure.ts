import type { EC2Client } from '@aws-sdk/client-ec2';
import { AWS_MACHINE_TEMPLATE, AWS_TEMPLATE_PARSER } from '@fleet/discovery';
import type { InfrastructureProvider } from '../infrastructure.js';
import { describeInstanceTypeCapacities } from './capacity.js';

/**
 * Cluster API on AWS (CAPA). The clone keeps everything of the worker's AWSMachineTemplate but
 * the instance type and the subnet: without a subnet CAPA places each Machine in a subnet of its
 * failure domain, so one template serves every zone.
 */
export function awsInfrastructureProvider(ec2: () => EC2Client): InfrastructureProvider {
  return {
    template: AWS_TEMPLATE_PARSER,
    templateKind: AWS_MACHINE_TEMPLATE,
    describeCapacities: (instanceTypes) => describeInstanceTypeCapacities(ec2(), instanceTypes),
    templateSpecFor(worker, instanceType) {
      const spec = structuredClone(worker.spec);
      delete spec.subnet;
      // Per-instance identifiers the worker's template may carry never apply to a copy.
      delete spec.instanceID;
      delete spec.providerID;
      return { ...spec, instanceType };
    },
  };
}
