import { readFileSync } from 'node:fs';

/**
 * The seed format of the emulator (the shape of fixtures' ec2-world.json). Tags are plain maps
 * here because that is how people write fixtures; the emulator renders them as EC2 tagSets.
 */
export interface Ec2World {
  region?: string;
  /** The account that owns everything in the world; `Owner=self` and ARNs use it. */
  accountId?: string;
  vpcs?: Ec2WorldVpc[];
  subnets?: Ec2WorldSubnet[];
  securityGroups?: Ec2WorldSecurityGroup[];
  images?: Ec2WorldImage[];
  instanceProfiles?: Ec2WorldInstanceProfile[];
  instances?: Ec2WorldInstance[];
  /** SQS queues of the account and region (Karpenter's interruption queue), by name. */
  queues?: SqsWorldQueue[];
  /**
   * The instance types the region offers (DescribeInstanceTypes). Absent: a small catalogue of
   * real types with EC2's published figures, `DEFAULT_INSTANCE_TYPES`.
   */
  instanceTypes?: Ec2WorldInstanceType[];
  /** IAM roles of the account (a Manual/STS cluster's web-identity role), with their policies. */
  roles?: IamWorldRole[];
}

export interface IamWorldPolicyStatement {
  Effect: 'Allow' | 'Deny';
  Action: string | string[];
  Resource: string | string[];
}

export interface IamWorldRole {
  RoleName: string;
  /** `/` unless given; part of the ARN. */
  Path?: string;
  /** Inline and attached policies alike: SimulatePrincipalPolicy evaluates them all. */
  Policies: { PolicyName: string; PolicyDocument: { Statement: IamWorldPolicyStatement[] } }[];
}

/** An instance type as DescribeInstanceTypes describes it (the fields the fleet reads). */
export interface Ec2WorldInstanceType {
  InstanceType: string;
  VCpus: number;
  MemoryMiB: number;
  Architectures?: ('x86_64' | 'arm64' | 'i386')[];
  CurrentGeneration?: boolean;
  /** Local NVMe instance storage, total GB (EC2's `InstanceStorageInfo.TotalSizeInGB`). */
  InstanceStorageGB?: number;
  Gpus?: { Name: string; Manufacturer: string; Count: number; MemoryMiB: number }[];
  MaximumNetworkInterfaces?: number;
  Ipv4AddressesPerInterface?: number;
}

/** Figures from EC2's DescribeInstanceTypes in us-east-1 (vCPUs, MiB, GB, ENIs). */
export const DEFAULT_INSTANCE_TYPES: readonly Ec2WorldInstanceType[] = [
  {
    InstanceType: 'm6i.large',
    VCpus: 2,
    MemoryMiB: 8192,
    MaximumNetworkInterfaces: 3,
    Ipv4AddressesPerInterface: 10,
  },
  {
    InstanceType: 'm6i.xlarge',
    VCpus: 4,
    MemoryMiB: 16384,
    MaximumNetworkInterfaces: 4,
    Ipv4AddressesPerInterface: 15,
  },
  {
    InstanceType: 'm6i.2xlarge',
    VCpus: 8,
    MemoryMiB: 32768,
    MaximumNetworkInterfaces: 4,
    Ipv4AddressesPerInterface: 15,
  },
  {
    InstanceType: 'c6i.2xlarge',
    VCpus: 8,
    MemoryMiB: 16384,
    MaximumNetworkInterfaces: 4,
    Ipv4AddressesPerInterface: 15,
  },
  {
    InstanceType: 'r6i.xlarge',
    VCpus: 4,
    MemoryMiB: 32768,
    MaximumNetworkInterfaces: 4,
    Ipv4AddressesPerInterface: 15,
  },
  {
    InstanceType: 'm6id.xlarge',
    VCpus: 4,
    MemoryMiB: 16384,
    InstanceStorageGB: 237,
    MaximumNetworkInterfaces: 4,
    Ipv4AddressesPerInterface: 15,
  },
  {
    InstanceType: 'm6g.xlarge',
    VCpus: 4,
    MemoryMiB: 16384,
    Architectures: ['arm64'],
    MaximumNetworkInterfaces: 4,
    Ipv4AddressesPerInterface: 15,
  },
  {
    InstanceType: 'g5.xlarge',
    VCpus: 4,
    MemoryMiB: 16384,
    InstanceStorageGB: 250,
    Gpus: [{ Name: 'A10G', Manufacturer: 'NVIDIA', Count: 1, MemoryMiB: 24576 }],
    MaximumNetworkInterfaces: 4,
    Ipv4AddressesPerInterface: 15,
  },
];

export interface SqsWorldQueue {
  QueueName: string;
}

export type Ec2Tags = Record<string, string>;

export interface Ec2WorldVpc {
  VpcId: string;
  CidrBlock?: string;
  Tags?: Ec2Tags;
}

export interface Ec2WorldSubnet {
  SubnetId: string;
  VpcId: string;
  AvailabilityZone: string;
  AvailabilityZoneId?: string;
  CidrBlock?: string;
  AvailableIpAddressCount?: number;
  MapPublicIpOnLaunch?: boolean;
  DefaultForAz?: boolean;
  State?: 'available' | 'pending';
  Tags?: Ec2Tags;
}

export interface Ec2WorldSecurityGroup {
  GroupId: string;
  GroupName: string;
  Description?: string;
  VpcId?: string;
  Tags?: Ec2Tags;
}

export interface Ec2WorldImage {
  ImageId: string;
  Name?: string;
  Description?: string;
  Architecture?: string;
  State?: 'available' | 'pending' | 'failed' | 'deregistered' | 'disabled';
  OwnerId?: string;
  /** `amazon` for AWS-owned public images; matched by `Owner=amazon`. */
  OwnerAlias?: string;
  Public?: boolean;
  CreationDate?: string;
  RootDeviceName?: string;
  Tags?: Ec2Tags;
}

export interface Ec2WorldInstanceProfile {
  InstanceProfileName: string;
  Arn: string;
}

export type Ec2InstanceStateName =
  'pending' | 'running' | 'shutting-down' | 'terminated' | 'stopping' | 'stopped';

export interface Ec2WorldInstance {
  InstanceId: string;
  InstanceType?: string;
  ImageId?: string;
  PrivateDnsName?: string;
  PrivateIpAddress?: string;
  /** More private IPv4 addresses on the primary interface (each with its own private DNS name). */
  SecondaryPrivateIpAddresses?: string[];
  SubnetId?: string;
  VpcId?: string;
  AvailabilityZone?: string;
  State?: Ec2InstanceStateName;
  LaunchTime?: string;
  /** Instance profile name (resolved to an ARN through `instanceProfiles`) or an ARN. */
  IamInstanceProfile?: string;
  SecurityGroupIds?: string[];
  ReservationId?: string;
  Tags?: Ec2Tags;
  /** What the instance was launched with (RunInstances UserData), as its first boot reads it. */
  UserData?: string;
  /** `spot` for a Spot Instance; absent for On-Demand, as EC2 reports it. */
  InstanceLifecycle?: 'spot';
  /** The launch template it came from (CreateFleet), as EC2's `aws:ec2launchtemplate:id` tag. */
  LaunchTemplateId?: string;
}

export function loadWorld(path: string | URL): Ec2World {
  return JSON.parse(readFileSync(path, 'utf8')) as Ec2World;
}
