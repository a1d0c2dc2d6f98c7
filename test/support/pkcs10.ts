import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';

import { oid, pem, seq, set, tlv, utf8 } from './der.js';

// PKCS#10 certificate requests (RFC 2986), signed with a real key, so tests and the demo hand
// the sidecar the same bytes a kubelet would.

export interface CertificateRequestSubject {
  commonName: string;
  organizations?: string[];
}

/** A PEM `CERTIFICATE REQUEST` for the subject, signed with SHA-256 by `keys` (EC P-256 or RSA). */
export function createCertificateRequestPem(
  subject: CertificateRequestSubject,
  keys: { privateKey: KeyObject; publicKey: KeyObject } = generateKeyPairSync('ec', {
    namedCurve: 'prime256v1',
  }),
): string {
  const rdns = [
    ...(subject.organizations ?? []).map((o) => set(seq(oid('2.5.4.10'), utf8(o)))),
    set(seq(oid('2.5.4.3'), utf8(subject.commonName))),
  ];
  const spki = keys.publicKey.export({ type: 'spki', format: 'der' });
  const info = seq(tlv(0x02, Buffer.from([0])), seq(...rdns), spki, tlv(0xa0, Buffer.alloc(0)));
  const signature = sign('sha256', info, keys.privateKey);
  const rsa = keys.privateKey.asymmetricKeyType === 'rsa';
  const der = seq(
    info,
    // ecdsa-with-SHA256, or sha256WithRSAEncryption (whose parameters are an explicit NULL).
    rsa ? seq(oid('1.2.840.113549.1.1.11'), Buffer.from([5, 0])) : seq(oid('1.2.840.10045.4.3.2')),
    tlv(0x03, Buffer.concat([Buffer.from([0]), signature])),
  );
  return pem('CERTIFICATE REQUEST', der);
}

/** What a kubelet puts in a CSR's spec.request: base64 of the PEM. */
export function kubeletCsrRequest(nodeName: string): string {
  return Buffer.from(
    createCertificateRequestPem({
      commonName: `system:node:${nodeName}`,
      organizations: ['system:nodes'],
    }),
  ).toString('base64');
}
