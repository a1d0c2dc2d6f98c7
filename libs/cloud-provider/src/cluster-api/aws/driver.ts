import { EC2Client } from '@aws-sdk/client-ec2';
import { AWS_TEMPLATE_PARSER } from '@fleet/discovery';
import { awsClientConfig } from '../../aws/credentials.js';
import type { ClusterApiInfrastructureEntry } from '../driver.js';
import { awsInfrastructureProvider } from './infrastructure.js';

/** `us-east-1a` → `us-east-1`: CAPA's failure domains are the region's zones. */
const regionOf = (zone: string | undefined): string => zone?.replace(/[a-z]$/, '') ?? 'us-east-1';

/** CAPA: EC2 for capacities, with the same credentials and endpoints as standalone AWS. */
export const awsClusterApiInfrastructure: ClusterApiInfrastructureEntry = {
  parser: AWS_TEMPLATE_PARSER,
  create(env, failureDomains) {
    let client: EC2Client | undefined;
    const ec2 = () => (client ??= new EC2Client(awsClientConfig(env, regionOf(failureDomains[0]))));
    return {
      ...awsInfrastructureProvider(ec2),
      close() {
        client?.destroy();
        client = undefined;
      },
    };
  },
};
