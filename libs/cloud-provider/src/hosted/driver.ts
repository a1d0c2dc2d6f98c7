import { EC2Client } from '@aws-sdk/client-ec2';
import {
  NODECLAIM,
  NODEPOOL,
  type KarpenterDesiredState,
  type NodeClassOverrides,
} from '@fleet/contracts';
import { discoverHostedAws, type HostedAwsInfrastructure } from '@fleet/discovery';
import { awsClientConfig, ec2CallDeadlineMs } from '../aws/credentials.js';
import { describeInstancesLookup } from '../aws/describe-instances.js';
import { validateNodeClassOverrides } from '../aws/nodeclass.js';
import {
  parseAwsProviderID,
  verifyAwsNodeIdentity,
  type DescribeInstancesLookup,
} from '../aws/node-identity.js';
import type { ClusterDriver, DriverContext, DriverRegistration, StatusSurface } from '../driver.js';
import type {
  CloudProvider,
  CustomResourceDefinitionSource,
  KubeObject,
  NodeClassEnforcement,
  NodeIdentityClaim,
  NodeIdentityVerdict,
  OwnedKind,
  TargetedObject,
} from '../types.js';
import {
  GUEST_OWNED_KINDS,
  HOSTED_DEFAULT_NODE_CLASS_NAME,
  OPENSHIFT_EC2_NODE_CLASS,
  renderHostedDefaultNodeClass,
  renderHostedNodePools,
} from './autonode.js';
import { AWS_HOSTED } from './registration.js';

/**
 * The hosted provider in AutoNode mode: HyperShift runs the operand, installs the CRDs in the
 * guest, derives EC2NodeClasses and approves CSRs; the fleet renders what HyperShift leaves to
 * users (the default OpenshiftEC2NodeClass and the NodePools) and drives spec.autoNode
 * (hosted/autonode.ts), which is no owned object: pruning must never touch a HostedCluster.
 */
export class AwsHostedCloudProvider implements CloudProvider<
  HostedAwsInfrastructure,
  DescribeInstancesLookup
> {
  readonly name = 'aws';
  readonly topology = 'HOSTED';
  readonly nodeClass = OPENSHIFT_EC2_NODE_CLASS;
  readonly defaultNodeClassName = HOSTED_DEFAULT_NODE_CLASS_NAME;
  /** Karpenter's own label names the EC2NodeClass HyperShift derived (same name). */
  readonly nodeClassLabel = 'karpenter.k8s.aws/ec2nodeclass';

  constructor(readonly operandNamespace: string) {}

  /** What the guest serves once HyperShift's karpenter-operator runs; the fleet validates with them. */
  customResourceDefinitions(): readonly CustomResourceDefinitionSource[] {
    return [
      {
        identity: NODEPOOL,
        target: 'workload',
        origin: 'upstream',
        path: 'karpenter/karpenter.sh_nodepools.yaml',
      },
      {
        identity: NODECLAIM,
        target: 'workload',
        origin: 'upstream',
        path: 'karpenter/karpenter.sh_nodeclaims.yaml',
      },
      {
        identity: OPENSHIFT_EC2_NODE_CLASS,
        target: 'workload',
        origin: 'upstream',
        path: 'karpenter/karpenter.hypershift.openshift.io_openshiftec2nodeclasses.yaml',
      },
    ];
  }

  /** HyperShift runs the operand in AutoNode mode. */
  renderOperand(): TargetedObject[] {
    return [];
  }

  renderDefaultNodeClass(infra: HostedAwsInfrastructure, overrides: NodeClassOverrides) {
    return {
      target: 'workload' as const,
      object: renderHostedDefaultNodeClass(infra.infraID, overrides),
    };
  }

  validateNodeClassOverrides(overrides: NodeClassOverrides): void {
    validateNodeClassOverrides(overrides);
  }

  /** Nothing is derived by the fleet in AutoNode mode: HyperShift derives the EC2NodeClass. */
  enforceNodeClass(live: KubeObject): NodeClassEnforcement {
    return {
      patch: {
        apiVersion: live.apiVersion,
        kind: live.kind,
        metadata: { name: live.metadata.name },
      },
      drifted: [],
    };
  }

  renderNodeClassConfig(): TargetedObject[] {
    return [];
  }

  nodeClassConfigKinds() {
    return [];
  }

  renderNodePools(desired: KarpenterDesiredState): TargetedObject[] {
    return renderHostedNodePools(desired).map((object) => ({ target: 'workload', object }));
  }

  ownedKinds(): readonly OwnedKind[] {
    return GUEST_OWNED_KINDS;
  }

  relatedObjects() {
    return [];
  }

  renderClusterOperator(): TargetedObject {
    throw new Error('a hosted cluster has no ClusterOperator (statusSurfaces is empty)');
  }

  parseProviderID(providerID: string): string | undefined {
    return parseAwsProviderID(providerID);
  }

  verifyNodeIdentity(
    claims: readonly NodeIdentityClaim[],
    lookup: DescribeInstancesLookup,
  ): Promise<NodeIdentityVerdict[]> {
    return verifyAwsNodeIdentity(claims, lookup);
  }
}

/**
 * A HyperShift hosted cluster on AWS, the sidecar in its HCP namespace (SIDECAR_NAMESPACE):
 * discovery from the HostedControlPlane on the management cluster, NodePools and
 * OpenshiftEC2NodeClasses in the guest.
 */
class AwsHostedDriver implements ClusterDriver<HostedAwsInfrastructure> {
  readonly platform = 'AWS';
  readonly topology = 'HOSTED';
  readonly provider: AwsHostedCloudProvider;
  /** HyperShift writes HostedControlPlane.status.autoNode (AutoNode); the sidecar writes none. */
  readonly statusSurfaces: readonly StatusSurface[] = [];
  private readonly clients = new Map<string, EC2Client>();

  constructor(private readonly context: DriverContext) {
    this.provider = new AwsHostedCloudProvider(context.env.SIDECAR_NAMESPACE ?? '');
  }

  discover() {
    return discoverHostedAws({
      reader: this.context.reader('management'),
      hcpNamespace: this.provider.operandNamespace,
    });
  }

  nodeIdentity(infra: HostedAwsInfrastructure) {
    let client = this.clients.get(infra.region);
    if (!client) {
      client = new EC2Client(awsClientConfig(this.context.env, infra.region));
      this.clients.set(infra.region, client);
    }
    const lookup = describeInstancesLookup(client, ec2CallDeadlineMs(this.context.env));
    return (claims: readonly NodeIdentityClaim[]) =>
      this.provider.verifyNodeIdentity(claims, lookup);
  }

  close(): void {
    for (const client of this.clients.values()) client.destroy();
    this.clients.clear();
  }
}

export const AWS_HOSTED_DRIVER: DriverRegistration = {
  ...AWS_HOSTED,
  create: (context) => new AwsHostedDriver(context),
};
