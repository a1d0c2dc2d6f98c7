import type { NodeClassOverrides } from '@fleet/contracts';
import type { DriverDescription, PlatformRules } from '../driver.js';
import { nodeClassRefProblem } from '../nodepools.js';
import { validateKubeletForMachineConfig } from '../openshift/machine-config.js';
import type { KubeObject } from '../types.js';
import { AKS_NODE_CLASS, AKS_NODE_CLASS_CRD_FILE, DEFAULT_NODE_CLASS_NAME } from './constants.js';
import { validateNodeClassOverrides } from './nodeclass.js';

// What the registry and the fleet API know of Azure standalone without its driver (driver.ts),
// so that reading it loads no Azure SDK.

const PLACEHOLDER_SUBNET =
  '/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/placeholder/providers/Microsoft.Network/virtualNetworks/placeholder/subnets/placeholder';

/** The fleet API's checks for Azure: the fork's AKSNodeClass CRD, then the provider's own rules. */
export const AZURE_PLATFORM_RULES: PlatformRules = {
  platform: 'AZURE',
  nodeClass: AKS_NODE_CLASS,
  nodeClassCrdFile: AKS_NODE_CLASS_CRD_FILE,
  nodeClassForValidation(overrides: NodeClassOverrides): KubeObject {
    // Placeholders for what discovery fills in; they satisfy the CRD and stay out of the answer.
    return {
      apiVersion: AKS_NODE_CLASS.apiVersion,
      kind: AKS_NODE_CLASS.kind,
      metadata: { name: DEFAULT_NODE_CLASS_NAME },
      spec: {
        vnetSubnetID: PLACEHOLDER_SUBNET,
        osDiskSizeGB: 128,
        marketplaceImage: {
          publisher: 'placeholder',
          offer: 'placeholder',
          sku: 'placeholder',
          version: '1.0.0',
        },
        userData: '{}',
        ...structuredClone(overrides),
      },
    };
  },
  validateNodeClassOverrides(overrides: NodeClassOverrides): void {
    validateNodeClassOverrides(overrides);
    validateKubeletForMachineConfig(overrides);
  },
  nodeClassRefProblem: (ref) => nodeClassRefProblem(ref, AKS_NODE_CLASS),
};

/** Standalone OpenShift on Azure: one API server, the sidecar on it. */
export const AZURE_STANDALONE: DriverDescription = {
  platform: 'AZURE',
  topology: 'STANDALONE',
  rules: AZURE_PLATFORM_RULES,
  targets: ['workload'],
};
