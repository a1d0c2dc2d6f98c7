import { ComputeManagementClient } from '@azure/arm-compute';
import { NetworkManagementClient } from '@azure/arm-network';
import {
  ArmResourceReader,
  discoverAzureStandalone,
  type AzureStandaloneInfrastructure,
} from '@fleet/discovery';
import type { ClusterDriver, DriverContext, DriverRegistration } from '../driver.js';
import { armClientOptions, EntraClientCredential, parseAzureEnv } from './credentials.js';
import type { AzureVmIdentity } from './node-identity.js';
import { AzureStandaloneCloudProvider } from './provider.js';
import { AZURE_STANDALONE } from './registration.js';

/** `PowerState/running` → `running`. */
function powerStateOf(statuses: { code?: string }[] | undefined): string | undefined {
  const code = statuses?.find((s) => s.code?.startsWith('PowerState/'))?.code;
  return code?.slice('PowerState/'.length);
}

const NIC_ID =
  /\/resourceGroups\/([^/]+)\/providers\/Microsoft\.Network\/networkInterfaces\/([^/]+)$/i;

/**
 * Standalone OpenShift on Azure through the OpenShift fork of karpenter-provider-azure:
 * discovery through the Infrastructure, the worker MachineSet and Azure Resource Manager; CSR
 * approval checked against the VM and its NICs. The sidecar's Azure identity and ARM endpoint
 * come from azure/credentials.ts; the operand image from AZURE_KARPENTER_IMAGE.
 */
class AzureStandaloneDriver implements ClusterDriver<AzureStandaloneInfrastructure> {
  readonly platform = 'AZURE';
  readonly topology = 'STANDALONE';
  readonly provider: AzureStandaloneCloudProvider;
  /**
   * The `karpenter` ClusterOperator, as on AWS: written from the first order, so a cluster the
   * fork cannot serve (ImageNotSupported, CloudNotSupported) says why in `oc get co` and the
   * console; nothing else is written to a refused cluster.
   */
  readonly statusSurfaces = ['ClusterOperator'] as const;
  private readonly credential: EntraClientCredential;
  private readonly env: ReturnType<typeof parseAzureEnv>;
  private readonly compute = new Map<string, ComputeManagementClient>();
  private readonly network = new Map<string, NetworkManagementClient>();

  constructor(private readonly context: DriverContext) {
    this.env = parseAzureEnv(context.env);
    this.credential = new EntraClientCredential(this.env);
    const image = context.env.AZURE_KARPENTER_IMAGE;
    this.provider = new AzureStandaloneCloudProvider(image ? { image } : {});
  }

  discover() {
    return discoverAzureStandalone({
      reader: this.context.reader('workload'),
      arm: (subscriptionID) =>
        new ArmResourceReader(this.credential, subscriptionID, armClientOptions(this.env)),
    });
  }

  prepare(infra: AzureStandaloneInfrastructure) {
    if (this.provider.image) return Promise.resolve({ ok: true as const, infra });
    return Promise.resolve({
      ok: false as const,
      reason: 'OperandImageNotSet',
      message:
        'AZURE_KARPENTER_IMAGE: the sidecar names no image of the OpenShift fork of karpenter-provider-azure to run',
    });
  }

  private clients(subscriptionID: string) {
    const options = { ...armClientOptions(this.env), retryOptions: { maxRetries: 1 } };
    let compute = this.compute.get(subscriptionID);
    if (!compute) {
      compute = new ComputeManagementClient(this.credential, subscriptionID, options);
      this.compute.set(subscriptionID, compute);
    }
    let network = this.network.get(subscriptionID);
    if (!network) {
      network = new NetworkManagementClient(this.credential, subscriptionID, options);
      this.network.set(subscriptionID, network);
    }
    return { compute, network };
  }

  nodeIdentity(infra: AzureStandaloneInfrastructure) {
    const subscriptionID = infra.credentials.subscriptionID;
    const getVirtualMachine = async (
      resourceGroup: string,
      name: string,
    ): Promise<AzureVmIdentity | undefined> => {
      const { compute, network } = this.clients(subscriptionID);
      let vm;
      try {
        vm = await compute.virtualMachines.get(resourceGroup, name, { expand: 'instanceView' });
      } catch (err) {
        if ((err as { statusCode?: unknown }).statusCode === 404) return undefined;
        throw err;
      }
      const privateIpAddresses: string[] = [];
      for (const ref of vm.networkProfile?.networkInterfaces ?? []) {
        const [, nicGroup, nicName] = NIC_ID.exec(ref.id ?? '') ?? [];
        if (!nicGroup || !nicName) continue;
        const nic = await network.networkInterfaces.get(nicGroup, nicName);
        for (const ip of nic.ipConfigurations ?? [])
          if (ip.privateIPAddress) privateIpAddresses.push(ip.privateIPAddress);
      }
      return {
        id: vm.id ?? '',
        name: vm.name ?? name,
        ...(vm.osProfile?.computerName ? { computerName: vm.osProfile.computerName } : {}),
        ...(powerStateOf(vm.instanceView?.statuses) !== undefined
          ? { powerState: powerStateOf(vm.instanceView?.statuses) }
          : {}),
        privateIpAddresses,
        tags: vm.tags ?? {},
      };
    };
    return (claims: Parameters<AzureStandaloneCloudProvider['verifyNodeIdentity']>[0]) =>
      this.provider.verifyNodeIdentity(claims, {
        cluster: { subscriptionID, resourceGroup: infra.resourceGroup, clusterName: infra.infraID },
        getVirtualMachine,
      });
  }

  close(): void {
    this.compute.clear();
    this.network.clear();
  }
}

export const AZURE_STANDALONE_DRIVER: DriverRegistration = {
  ...AZURE_STANDALONE,
  create: (context) => new AzureStandaloneDriver(context),
};
