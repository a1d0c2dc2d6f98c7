import {
  CONTRACT_VERSION,
  DRIFT_ENTRIES_MAX,
  DRIFT_FIELDS_MAX,
  REPORT_CSR_DECISIONS_MAX,
  REPORT_NODECLAIMS_MAX,
  StatusReport,
  type Condition,
  type CsrDecision,
  type DriftEntry,
} from '@fleet/contracts';

const pad = (prefix: string, length: number) => (prefix + 'x'.repeat(length)).slice(0, length);

/**
 * The largest report the contract allows: 64 conditions and REPORT_CSR_DECISIONS_MAX decisions,
 * DRIFT_ENTRIES_MAX drift entries of DRIFT_FIELDS_MAX fields,
 * every bounded string at its maximum length (ASCII, as the sidecar writes them), 16 NodeClaim
 * states, REPORT_NODECLAIMS_MAX NodeClaims, integers at the largest the fleet stores. Parsed by the real schema, so it is valid by construction.
 */
export function largestStatusReport(clusterId: string): StatusReport {
  const at = '2026-01-01T00:00:00.000Z';
  const conditions: Condition[] = Array.from({ length: 64 }, (_, i) => ({
    type: pad(`Type${i}X`, 64),
    status: 'Unknown',
    reason: pad(`Reason${i}X`, 128),
    message: pad(`message ${i} `, 32768),
    lastTransitionTime: at,
  }));
  const csrDecisions: CsrDecision[] = Array.from({ length: REPORT_CSR_DECISIONS_MAX }, (_, i) => ({
    csrName: pad(`csr-${i}-`, 253),
    nodeName: pad(`node-${i}-`, 253),
    signerName: pad('kubernetes.io/kubelet-serving-', 253),
    decision: 'Denied',
    reason: pad(`Reason${i}`, 64),
    message: pad(`message ${i} `, 1024),
    decidedAt: new Date(Date.parse(at) + i).toISOString(),
  }));
  const drift: DriftEntry[] = Array.from({ length: DRIFT_ENTRIES_MAX }, (_, i) => ({
    target: 'management',
    apiVersion: pad(`group${i}.example.com/v1-`, 253),
    kind: pad(`Kind${i}`, 63),
    namespace: pad(`ns-${i}-`, 63),
    name: pad(`name-${i}-`, 253),
    change: 'Modified',
    fields: Array.from({ length: DRIFT_FIELDS_MAX }, (_, j) => ({
      path: pad(`.spec.f${i}.f${j}.`, 512),
      manager: pad(`manager-${j}-`, 128),
    })),
    moreFields: 2 ** 31 - 1,
    detectedAt: at,
    correctedAt: at,
  }));
  // Numbers as large as the fleet stores them (INTEGER columns).
  const big = 2 ** 31 - 1;
  return StatusReport.parse({
    clusterId,
    // The API refuses an observedGeneration above the cluster's desired generation (1 when new).
    observedGeneration: 1,
    conditions,
    metrics: {
      nodes: big,
      nodeClaims: big,
      nodeClaimsByState: Object.fromEntries(
        Array.from({ length: 16 }, (_, i) => [pad(`State${i}`, 64), big]),
      ),
      nodePools: big,
      vcpus: big,
      pendingPods: big,
      csrApproved: big,
      csrIgnored: big,
      csrDenied: big,
      csrDecisionsDropped: big,
      nodeClaimLaunchFailures: big,
      nodeClaimLaunchFailureTimes: Array.from({ length: 64 }, (_, i) =>
        new Date(Date.parse(at) - i * 1000).toISOString(),
      ),
      oldestPendingPodSince: at,
      // Deprecated but still accepted from older sidecars: the largest report carries it too.
      oldestPendingPodSeconds: big,
    },
    csrDecisions,
    clusterAutoscaler: { mode: 'MIGRATE', observed: 'Present', machineAutoscalers: big },
    drift,
    // REPORT_NODECLAIMS_MAX NodeClaims, every field at its longest (issue 47).
    nodeClaims: Array.from({ length: REPORT_NODECLAIMS_MAX }, (_, i) => ({
      name: pad(`nodeclaim-${i}-`, 253),
      nodePool: pad('pool-', 253),
      nodeName: pad(`node-${i}-`, 253),
      instanceType: pad('type-', 64),
      zone: pad('zone-', 64),
      capacityType: pad('cap-', 32),
      state: pad('State', 64),
      createdAt: at,
      launchFailure: { reason: pad('Reason', 128), message: pad('message ', 512) },
    })),
    sidecar: { version: pad('v', 64), contractVersion: CONTRACT_VERSION },
    reportedAt: at,
  });
}
