import type { ClusterObjectReader } from '../cluster-reader.js';
import { fail, readCluster } from '../stop.js';
import { MACHINE_API_NAMESPACE } from './worker-machinesets.js';

export const USER_DATA_KEY = 'userData';

/**
 * The worker's user data (the Ignition pointer to the Machine Config Server), decoded from the
 * MachineSet's user-data Secret; each missing piece stops discovery with its own reason.
 */
export async function readWorkerUserData(
  reader: ClusterObjectReader,
  worker: { name: string; userDataSecretName: string },
): Promise<string> {
  const secretName = worker.userDataSecretName;
  const where = `Secret ${MACHINE_API_NAMESPACE}/${secretName} (userDataSecret of MachineSet ${worker.name})`;
  const secret = await readCluster(where, () =>
    reader.getSecret(MACHINE_API_NAMESPACE, secretName),
  );
  if (secret === undefined) fail('UserDataSecretNotFound', `${where} not found`);
  const encoded = secret.data?.[USER_DATA_KEY];
  if (encoded === undefined || encoded === '') {
    fail('UserDataKeyMissing', `${where} has no '${USER_DATA_KEY}' key`);
  }
  const userData = Buffer.from(encoded, 'base64').toString('utf8');
  // The Windows Machine Config Operator's user data is a PowerShell script, not Ignition.
  if (/^\s*<powershell>/i.test(userData)) {
    fail('WindowsUserData', `${where} holds Windows (PowerShell) user data, not Ignition`);
  }
  return userData;
}
