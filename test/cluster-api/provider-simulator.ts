import type { EmulatedCapiCluster } from '../support/capi-aws-workload.js';
import type { KubeObject } from '../support/kube-apiserver/index.js';

const V1B1 = 'cluster.x-k8s.io/v1beta1';
const NODECLAIM = 'karpenter.sh/v1';
const NODE_CLASS = 'karpenter.cluster.x-k8s.io/v1alpha1';
const CPU = 'capacity.cluster-autoscaler.kubernetes.io/cpu';
const LABELS = 'capacity.cluster-autoscaler.kubernetes.io/labels';

export interface LaunchedMachine {
  nodeClaim: string;
  machineDeployment: string;
  machine: string;
  providerID: string;
  nodeName: string;
}

/**
 * Plays karpenter-provider-cluster-api and Cluster API for a NodeClaim: the provider lists
 * MachineDeployments only through the ClusterAPINodeClass's `scalableResourceSelector` and
 * reads what each offers from its capacity annotations (an unlabelled MachineDeployment is never
 * a candidate), scales the chosen one by one; CAPI (and CAPA) then create a Machine with an EC2
 * instance behind it, whose addresses the kubelet's certificates name.
 */
export class ClusterApiProviderSimulator {
  constructor(private readonly pair: EmulatedCapiCluster) {}

  /** MachineDeployments the provider would consider for a NodeClass, as it finds them. */
  candidates(nodeClass = 'default'): KubeObject[] {
    const nc = this.pair.workload.get(NODE_CLASS, 'ClusterAPINodeClass', nodeClass);
    const matchLabels =
      (nc?.spec as { scalableResourceSelector?: { matchLabels?: Record<string, string> } })
        ?.scalableResourceSelector?.matchLabels ?? {};
    if (Object.keys(matchLabels).length === 0) return [];
    // Cluster-wide by label, as the provider's client lists them.
    return this.pair.management
      .list(V1B1, 'MachineDeployment')
      .filter((md) => Object.entries(matchLabels).every(([k, v]) => md.metadata?.labels?.[k] === v))
      .filter((md) => md.metadata?.annotations?.[CPU] !== undefined);
  }

  /** Karpenter's status controller for the ClusterAPINodeClass. */
  markNodeClassReady(name = 'default'): void {
    this.pair.workload.patchStatus(NODE_CLASS, 'ClusterAPINodeClass', name, undefined, {
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'Ready',
          message: '',
          lastTransitionTime: new Date().toISOString(),
        },
      ],
    });
  }

  /** A NodeClaim for `instanceType` in `zone`: scale, Machine, instance, NodeClaim Launched. */
  launch(nodePool: string, instanceType: string, zone: string): LaunchedMachine {
    const { management, workload, ec2 } = this.pair;
    const md = this.candidates().find(
      (c) =>
        (c.metadata?.annotations?.[LABELS] ?? '')
          .split(',')
          .includes(`node.kubernetes.io/instance-type=${instanceType}`) &&
        (c.metadata?.annotations?.[LABELS] ?? '')
          .split(',')
          .includes(`topology.kubernetes.io/zone=${zone}`),
    );
    if (!md) throw new Error(`no candidate MachineDeployment offers ${instanceType} in ${zone}`);
    const name = md.metadata!.name!;
    const namespace = md.metadata!.namespace!;
    const replicas = ((md.spec as { replicas?: number }).replicas ?? 0) + 1;
    management.patch(V1B1, 'MachineDeployment', name, namespace, { spec: { replicas } }, 'merge', {
      fieldManager: 'karpenter',
    });
    const instance = ec2.addInstance({ AvailabilityZone: zone, InstanceType: instanceType });
    const providerID = `aws:///${zone}/${instance.InstanceId}`;
    const template = (md.spec as { template: { spec: Record<string, unknown> } }).template;
    const clusterName = (md.spec as { clusterName: string }).clusterName;
    const machine = `${name}-${instance.InstanceId.slice(-5)}`;
    management.create(
      {
        apiVersion: V1B1,
        kind: 'Machine',
        metadata: {
          name: machine,
          namespace,
          labels: {
            'cluster.x-k8s.io/cluster-name': clusterName,
            'cluster.x-k8s.io/deployment-name': name,
          },
        },
        spec: { ...structuredClone(template.spec), providerID },
      },
      { fieldManager: 'manager' },
    );
    management.patchStatus(V1B1, 'Machine', machine, namespace, {
      phase: 'Provisioned',
      addresses: [
        { type: 'InternalIP', address: instance.PrivateIpAddress },
        { type: 'InternalDNS', address: instance.PrivateDnsName },
      ],
    });
    const nodeClaim = `${nodePool}-${instance.InstanceId.slice(-5)}`;
    workload.create(
      {
        apiVersion: NODECLAIM,
        kind: 'NodeClaim',
        metadata: {
          name: nodeClaim,
          labels: {
            'karpenter.sh/nodepool': nodePool,
            'node.kubernetes.io/instance-type': instanceType,
          },
        },
        spec: {
          nodeClassRef: {
            group: 'karpenter.cluster.x-k8s.io',
            kind: 'ClusterAPINodeClass',
            name: 'default',
          },
          requirements: [
            { key: 'node.kubernetes.io/instance-type', operator: 'In', values: [instanceType] },
          ],
        },
      },
      { fieldManager: 'karpenter' },
    );
    workload.patchStatus(NODECLAIM, 'NodeClaim', nodeClaim, undefined, {
      providerID,
      conditions: [
        {
          type: 'Launched',
          status: 'True',
          reason: 'Launched',
          message: '',
          lastTransitionTime: new Date().toISOString(),
        },
      ],
    });
    return {
      nodeClaim,
      machineDeployment: name,
      machine,
      providerID,
      nodeName: instance.PrivateDnsName,
    };
  }

  /** The Node registers; CAPI's Machine controller records it (status.nodeRef). */
  registerNode(launched: LaunchedMachine, nodePool: string): void {
    this.pair.workload.create({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: launched.nodeName,
        labels: {
          'karpenter.sh/nodepool': nodePool,
          'kubernetes.io/hostname': launched.nodeName,
        },
      },
      spec: { providerID: launched.providerID },
      status: { capacity: { cpu: '4', memory: '16Gi', pods: '110' } },
    });
    this.pair.workload.patchStatus(NODECLAIM, 'NodeClaim', launched.nodeClaim, undefined, {
      nodeName: launched.nodeName,
    });
    const machine = this.pair.management.get(
      V1B1,
      'Machine',
      launched.machine,
      launchedNs(this.pair, launched),
    );
    this.pair.management.patchStatus(
      V1B1,
      'Machine',
      launched.machine,
      machine?.metadata?.namespace,
      { nodeRef: { apiVersion: 'v1', kind: 'Node', name: launched.nodeName } },
    );
  }
}

function launchedNs(pair: EmulatedCapiCluster, launched: LaunchedMachine): string | undefined {
  return pair.management.list(V1B1, 'Machine').find((m) => m.metadata?.name === launched.machine)
    ?.metadata?.namespace;
}
