import type { KubeObject } from '../types.js';

/** One server-side dry-run create (`dryRun=All`): resolves when the API server would accept it. */
export type DryRunCreate = (object: KubeObject) => Promise<void>;

export interface MachineDeploymentsRefusal {
  reason: 'MachineDeploymentsDenied' | 'MachineDeploymentsCheckFailed';
  message: string;
}

/**
 * Whether the management cluster accepts the fleet's MachineDeployments, asked of the API
 * server itself with a server-side dry-run create of the first one, before anything is written.
 * OpenShift's Cluster API has not supported MachineDeployments: depending on the release the
 * CRD is missing, or an admission policy or webhook refuses them in openshift-cluster-api. The
 * API server's own answer (the policy and binding, the webhook, or the missing resource) is
 * quoted; nothing here knows any policy. Undefined when the create would be accepted.
 */
export async function checkMachineDeploymentsAllowed(
  dryRunCreate: DryRunCreate,
  probe: KubeObject,
): Promise<MachineDeploymentsRefusal | undefined> {
  const where = `${probe.metadata.namespace ?? ''}/${probe.metadata.name}`;
  try {
    await dryRunCreate(probe);
    return undefined;
  } catch (err) {
    const { code, message } = statusOf(err);
    // 409: one exists already (an earlier reconcile created it), so creating is allowed.
    if (code === 409) return undefined;
    if (code === 404)
      return {
        reason: 'MachineDeploymentsDenied',
        message: `the management cluster does not serve ${probe.apiVersion} MachineDeployments (dry-run create of ${where}: HTTP 404${message ? `: ${message}` : ''})`,
      };
    if (code === 400 || code === 403 || code === 422)
      return {
        reason: 'MachineDeploymentsDenied',
        message: `the management cluster refuses MachineDeployments (dry-run create of ${where}): HTTP ${code}: ${message}`,
      };
    return {
      reason: 'MachineDeploymentsCheckFailed',
      message: `dry-run create of MachineDeployment ${where} failed: ${code !== undefined ? `HTTP ${code}: ` : ''}${message}`,
    };
  }
}

/** The HTTP code and Status message of a client-node ApiException (or any error). */
function statusOf(err: unknown): { code?: number; message: string } {
  const e = err as { code?: unknown; body?: unknown; message?: unknown };
  const code = typeof e.code === 'number' ? e.code : undefined;
  let message = typeof e.message === 'string' ? e.message : String(err);
  try {
    const body: unknown = typeof e.body === 'string' ? JSON.parse(e.body) : e.body;
    const status = body as { message?: unknown } | undefined;
    if (typeof status?.message === 'string') message = status.message;
  } catch {
    // a body that is not a Status leaves the error's own message
  }
  return code === undefined ? { message } : { code, message };
}
