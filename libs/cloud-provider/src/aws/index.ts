export * from './constants.js';
export {
  AwsStandaloneCloudProvider,
  AWS_BUNDLED_CRD_DIRECTORY,
  KARPENTER_CR_CRD_PATH,
  type AwsCloudProviderOptions,
} from './provider.js';
export {
  clusterNodeClassTags,
  desiredKubelet,
  enforceEC2NodeClass,
  enforcedNodeClassFields,
  renderDefaultEC2NodeClass,
  validateNodeClassOverrides,
  type EC2NodeClass,
} from './nodeclass.js';
export {
  KARPENTER_AWS_ACTIONS,
  karpenterPolicyStatements,
  usesWebIdentity,
  type KarpenterPolicyStatement,
  OPERAND_SELECTOR,
  credentialsRequest,
  deployment,
  karpenterCR,
  logLevelArg,
  operandEnv,
  renderAwsOperand,
  renderFeatureGates,
} from './operand.js';
export {
  DESCRIBE_INSTANCES_BATCH_SIZE,
  parseAwsProviderID,
  verifyAwsNodeIdentity,
  type DescribeInstancesLookup,
  type Ec2InstanceIdentity,
} from './node-identity.js';
export { describeInstancesLookup } from './describe-instances.js';
export { awsClientConfig } from './credentials.js';
export { AWS_PLATFORM_RULES } from './registration.js';
export { AWS_STANDALONE_DRIVER } from './driver.js';
export { awsMachine, proposeAwsStandaloneMigration, RHCOS_ROOT_DEVICE } from './migration.js';
export { ec2InstanceCapacity } from './instance-capacity.js';
