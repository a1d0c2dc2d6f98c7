export { AKS_NODE_CLASS, AKS_NODE_CLASS_CRD_FILE, AKS_NODE_CLASS_LABEL } from './constants.js';
export { AzureStandaloneCloudProvider, type AzureInstanceLookup } from './provider.js';
export {
  clusterNodeClassTags as azureClusterNodeClassTags,
  enforceAKSNodeClass,
  renderDefaultAKSNodeClass,
  type AKSNodeClass,
} from './nodeclass.js';
export { operandEnv as azureOperandEnv, renderAzureOperand } from './operand.js';
export {
  AZURE_CLUSTER_TAG,
  parseAzureProviderID,
  verifyAzureNodeIdentity,
  type AzureNodeIdentityCluster,
  type AzureVmIdentity,
  type AzureVmLookup,
} from './node-identity.js';
export { EntraClientCredential, parseAzureEnv } from './credentials.js';
export { AZURE_PLATFORM_RULES } from './registration.js';
export { AZURE_STANDALONE_DRIVER } from './driver.js';
