import { describe, expect, it } from '@jest/globals';
import { parseCloudCredentials } from './credentials-mode.js';

const cloudCredential = (credentialsMode?: string) => ({
  apiVersion: 'operator.openshift.io/v1',
  kind: 'CloudCredential',
  metadata: { name: 'cluster' },
  spec: credentialsMode === undefined ? {} : { credentialsMode },
});
const authentication = (serviceAccountIssuer?: string) => ({
  apiVersion: 'config.openshift.io/v1',
  kind: 'Authentication',
  metadata: { name: 'cluster' },
  spec: serviceAccountIssuer === undefined ? {} : { serviceAccountIssuer },
});
const ISSUER = 'https://prod-east-oidc.s3.us-east-1.amazonaws.com';

describe('parseCloudCredentials', () => {
  it('no CloudCredential is the default mode, as CCO assumes', () => {
    expect(parseCloudCredentials(undefined, authentication(ISSUER))).toEqual({
      ok: true,
      value: { mode: 'Default' },
    });
  });

  it('an empty or absent credentialsMode is the default mode', () => {
    for (const mode of ['', undefined])
      expect(parseCloudCredentials(cloudCredential(mode), undefined)).toEqual({
        ok: true,
        value: { mode: 'Default' },
      });
  });

  it('Mint and Passthrough are kept; an issuer does not make them STS', () => {
    for (const mode of ['Mint', 'Passthrough'])
      expect(parseCloudCredentials(cloudCredential(mode), authentication(ISSUER))).toEqual({
        ok: true,
        value: { mode },
      });
  });

  it('Manual with a service-account issuer is STS', () => {
    expect(parseCloudCredentials(cloudCredential('Manual'), authentication(ISSUER))).toEqual({
      ok: true,
      value: { mode: 'ManualSTS', serviceAccountIssuer: ISSUER },
    });
  });

  it('Manual without an issuer (or without the Authentication) is plain Manual', () => {
    for (const auth of [undefined, authentication(), authentication('')])
      expect(parseCloudCredentials(cloudCredential('Manual'), auth)).toEqual({
        ok: true,
        value: { mode: 'Manual' },
      });
  });

  it('a mode CCO does not know is refused, naming the field', () => {
    const result = parseCloudCredentials(cloudCredential('Magic'), undefined);
    expect(result).toMatchObject({ ok: false, reason: 'InvalidCloudCredential' });
    expect(!result.ok && result.message).toMatch(
      /^CloudCredential cluster: spec\.credentialsMode: /,
    );
  });
});
