import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { CsrDecision } from '@fleet/contracts';
import { randomBytes } from 'node:crypto';
import { KARPENTER_USER, NODE_BOOTSTRAPPER } from '../support/node-launch-simulator.js';
import { kubeletCsrRequest } from '../support/pkcs10.js';
import { azureFixtureInfrastructure } from '../support/ocp-azure-standalone.js';
import { GENERAL_NODEPOOL, startAzureHarness, until, type AzureHarness } from './harness.js';

const CSR = ['certificates.k8s.io/v1', 'CertificateSigningRequest'] as const;
const NODECLAIM = 'karpenter.sh/v1';
const infra = azureFixtureInfrastructure();
const SUBSCRIPTION = infra.credentials.subscriptionID;
const RG = infra.resourceGroup;

/**
 * CSR approval for the nodes karpenter-provider-azure launches, checked in Azure as the AWS
 * approver checks EC2: the VM behind the NodeClaim's providerID (in the cluster's resource group,
 * carrying the cluster tag karpenter.azure.com_cluster=<infraID>, running, its computer name the
 * node name) and its NICs' private IPs, through the real
 * @azure/arm-compute and @azure/arm-network clients against the ARM emulator.
 */
describe('Azure: CSR node identity through ARM', () => {
  let h: AzureHarness;

  const decisionsFor = (csr: string): CsrDecision[] =>
    h.runtime.approver.unsentDecisions().filter((d) => d.csrName === csr);
  const decided = (csr: string, reason: string) =>
    until(() => decisionsFor(csr).find((d) => d.reason === reason), `${csr} decided ${reason}`);
  const conditionsOf = (csr: string) =>
    (h.cluster.kube.get(...CSR, csr)?.status as { conditions?: { type: string }[] } | undefined)
      ?.conditions ?? [];

  /** A NodeClaim as Karpenter creates it, and the VM (with its NIC) the provider makes for it. */
  const launch = (
    options: {
      vm?: boolean;
      ip?: string;
      nodeName?: boolean;
      powerState?: string;
      computerName?: string;
      tags?: Record<string, string>;
    } = {},
  ) => {
    const name = `general-${randomBytes(3).toString('hex')}`;
    const vmName = `aks-${name}`;
    h.cluster.kube.as(KARPENTER_USER).create(
      {
        apiVersion: NODECLAIM,
        kind: 'NodeClaim',
        metadata: {
          name,
          labels: {
            'karpenter.sh/nodepool': 'general',
            'karpenter.azure.com/aksnodeclass': 'default',
          },
        },
        spec: {
          nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
          requirements: [
            {
              key: 'node.kubernetes.io/instance-type',
              operator: 'In',
              values: ['Standard_D4s_v3'],
            },
          ],
        },
      },
      { fieldManager: 'karpenter' },
    );
    const ip = options.ip ?? `10.0.2.${10 + Math.floor(Math.random() * 200)}`;
    if (options.vm !== false)
      h.cluster.arm.addVirtualMachine(
        {
          resourceGroup: RG,
          name: vmName,
          location: 'eastus',
          computerName: options.computerName ?? vmName,
          powerState: options.powerState ?? 'running',
          networkInterfaces: [vmName],
          // The tags karpenter-provider-azure writes on every VM it launches.
          tags: options.tags ?? {
            'karpenter.azure.com_cluster': infra.infraID,
            'karpenter.sh_nodepool': 'general',
            'compute.aks.billing': 'linux',
          },
        },
        [{ resourceGroup: RG, name: vmName, privateIPAddresses: [ip] }],
      );
    // machine-api-provider-azure and the fork lowercase the resource group in providerIDs.
    const providerID = `azure:///subscriptions/${SUBSCRIPTION}/resourceGroups/${RG.toLowerCase()}/providers/Microsoft.Compute/virtualMachines/${vmName}`;
    h.cluster.kube.patchStatus(NODECLAIM, 'NodeClaim', name, undefined, {
      providerID,
      ...(options.nodeName ? { nodeName: vmName } : {}),
      conditions: [
        {
          type: 'Launched',
          status: 'True',
          reason: 'Launched',
          message: '',
          lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
        },
      ],
    });
    return { name, nodeName: vmName, ip };
  };

  const submit = (
    nodeName: string,
    kind: 'client' | 'serving',
    sans?: { dnsNames: string[]; ipAddresses: string[] },
  ) => {
    const name = `csr-${randomBytes(5).toString('hex')}`;
    h.cluster.kube.create(
      {
        apiVersion: CSR[0],
        kind: CSR[1],
        metadata: { name },
        spec: {
          request: kubeletCsrRequest(nodeName, sans),
          signerName:
            kind === 'client'
              ? 'kubernetes.io/kube-apiserver-client-kubelet'
              : 'kubernetes.io/kubelet-serving',
          usages:
            kind === 'client'
              ? ['digital signature', 'client auth']
              : ['digital signature', 'server auth'],
        },
      },
      {
        fieldManager: 'kubelet',
        user:
          kind === 'client'
            ? {
                username: NODE_BOOTSTRAPPER,
                groups: [
                  'system:serviceaccounts',
                  'system:serviceaccounts:openshift-machine-config-operator',
                  'system:authenticated',
                ],
              }
            : {
                username: `system:node:${nodeName}`,
                groups: ['system:nodes', 'system:authenticated'],
              },
      },
    );
    return name;
  };

  beforeAll(async () => {
    h = await startAzureHarness();
    await h.runtime.apply(h.order({ enabled: true, nodePools: [GENERAL_NODEPOOL] }));
    // The launch gate lets NodeClaims of the default AKSNodeClass through once its pool is in place.
    await until(
      () =>
        (
          h.cluster.kube.get(
            'v1',
            'ConfigMap',
            'karpenter-fleet-launchable-nodeclasses',
            'openshift-karpenter',
          )?.data as Record<string, string> | undefined
        )?.default,
      'the default AKSNodeClass in the launch gate',
    );
    await h.runtime.watches.nodeClaims.whenSynced();
    await h.runtime.watches.csrs.whenSynced();
  });
  afterAll(async () => h?.stop());

  it("approves a node's client CSR once its VM is found with the node's name, and its serving CSR with the NIC's IP", async () => {
    const node = launch();
    const client = submit(node.nodeName, 'client');
    await decided(client, 'KarpenterCSRApprove');
    expect(conditionsOf(client)).toEqual([expect.objectContaining({ type: 'Approved' })]);
    // The VM with its instance view, then its NIC, read through ARM.
    const paths = h.cluster.arm.requests.map((r) => r.path.toLowerCase());
    expect(paths).toContain(
      `/subscriptions/${SUBSCRIPTION}/resourcegroups/${RG}/providers/microsoft.compute/virtualmachines/${node.nodeName}`.toLowerCase(),
    );
    expect(paths).toContain(
      `/subscriptions/${SUBSCRIPTION}/resourcegroups/${RG}/providers/microsoft.network/networkinterfaces/${node.nodeName}`.toLowerCase(),
    );

    h.cluster.kube.patchStatus(NODECLAIM, 'NodeClaim', node.name, undefined, {
      nodeName: node.nodeName,
    });
    const serving = submit(node.nodeName, 'serving', {
      dnsNames: [node.nodeName],
      ipAddresses: [node.ip],
    });
    await decided(serving, 'KarpenterCSRApprove');
    expect(conditionsOf(serving)).toEqual([expect.objectContaining({ type: 'Approved' })]);
  });

  it('refuses a serving CSR naming an IP the VM has no NIC for', async () => {
    const node = launch({ ip: '10.0.2.5', nodeName: true });
    const csr = submit(node.nodeName, 'serving', {
      dnsNames: [node.nodeName],
      ipAddresses: ['10.0.2.99'],
    });
    const d = await decided(csr, 'SubjectAltNameNotOwned');
    expect(d).toMatchObject({
      decision: 'Denied',
      message: expect.stringContaining('IP address 10.0.2.99') as unknown,
    });
    expect(d.message).toContain('10.0.2.5');
    expect(conditionsOf(csr)).toEqual([]);
  });

  it('refuses a serving CSR whose NodeClaim names a VM Azure does not have', async () => {
    const node = launch({ vm: false, nodeName: true });
    const csr = submit(node.nodeName, 'serving', { dnsNames: [node.nodeName], ipAddresses: [] });
    const d = await decided(csr, 'InstanceNotFound');
    expect(d).toMatchObject({
      decision: 'Denied',
      message: `Azure VM ${node.nodeName} does not exist in resource group ${RG}`,
    });
    expect(conditionsOf(csr)).toEqual([]);
  });

  it.each(['deallocated', 'stopped'])(
    'refuses a serving CSR whose VM is %s',
    async (powerState) => {
      const node = launch({ powerState, nodeName: true });
      const csr = submit(node.nodeName, 'serving', {
        dnsNames: [node.nodeName],
        ipAddresses: [node.ip],
      });
      const d = await decided(csr, 'InstanceNotRunning');
      expect(d).toMatchObject({
        decision: 'Denied',
        message: `Azure VM ${node.nodeName} is ${powerState}`,
      });
      expect(conditionsOf(csr)).toEqual([]);
    },
  );

  it("refuses a serving CSR whose VM's computer name is not the node's", async () => {
    const node = launch({ computerName: 'aks-general-impostor', nodeName: true });
    const csr = submit(node.nodeName, 'serving', {
      dnsNames: [node.nodeName],
      ipAddresses: [node.ip],
    });
    const d = await decided(csr, 'NodeNameMismatch');
    expect(d).toMatchObject({
      decision: 'Denied',
      message: `Azure VM ${node.nodeName} has computer name "aks-general-impostor", not node name "${node.nodeName}"`,
    });
    expect(conditionsOf(csr)).toEqual([]);
  });

  it("refuses a serving CSR whose VM carries another cluster's tag, or none", async () => {
    const theirs = launch({
      nodeName: true,
      tags: {
        'karpenter.azure.com_cluster': 'prod-east-x7k2p',
        'karpenter.sh_nodepool': 'general',
        'compute.aks.billing': 'linux',
      },
    });
    const untagged = launch({ nodeName: true, tags: { 'karpenter.sh_nodepool': 'general' } });
    const theirsCsr = submit(theirs.nodeName, 'serving', {
      dnsNames: [theirs.nodeName],
      ipAddresses: [theirs.ip],
    });
    const untaggedCsr = submit(untagged.nodeName, 'serving', {
      dnsNames: [untagged.nodeName],
      ipAddresses: [untagged.ip],
    });
    expect(await decided(theirsCsr, 'InstanceNotInCluster')).toMatchObject({
      decision: 'Denied',
      message: `Azure VM ${theirs.nodeName} has tag karpenter.azure.com_cluster=prod-east-x7k2p, not ${infra.infraID}`,
    });
    expect(await decided(untaggedCsr, 'InstanceNotInCluster')).toMatchObject({
      decision: 'Denied',
      message: `Azure VM ${untagged.nodeName} has no karpenter.azure.com_cluster tag; the cluster's VMs carry karpenter.azure.com_cluster=${infra.infraID}`,
    });
    for (const csr of [theirsCsr, untaggedCsr]) expect(conditionsOf(csr)).toEqual([]);
  });

  it("leaves the client CSR of another cluster's VM unapproved", async () => {
    const theirs = launch({ tags: { 'karpenter.azure.com_cluster': 'prod-east-x7k2p' } });
    const csr = submit(theirs.nodeName, 'client');
    // Its VM is not this cluster's, so no NodeClaim awaiting a node has an instance of that name.
    const d = await decided(csr, 'UnknownNodeName');
    expect(d).toMatchObject({ decision: 'Ignored', nodeName: theirs.nodeName });
    expect(decisionsFor(csr).map((x) => x.reason)).not.toContain('KarpenterCSRApprove');
    expect(conditionsOf(csr)).toEqual([]);
  });

  it('leaves a client CSR for a name no VM has unapproved', async () => {
    launch({ vm: false });
    const csr = submit('aks-general-nobody', 'client');
    const d = await decided(csr, 'UnknownNodeName');
    expect(d).toMatchObject({ decision: 'Ignored', nodeName: 'aks-general-nobody' });
    expect(conditionsOf(csr)).toEqual([]);
  });
});
