import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';

import { isIPv4 } from 'node:net';

import { oid, octets, pem, seq, set, tlv, utf8 } from './der.js';

// PKCS#10 certificate requests (RFC 2986), signed with a real key, so tests and the demo hand
// the sidecar the same bytes a kubelet would.

export interface CertificateRequestSubject {
  commonName: string;
  organizations?: string[];
  /** Written as a subjectAltName extension in an extensionRequest attribute, as a kubelet does. */
  subjectAltNames?: CertificateRequestSans;
}

export interface CertificateRequestSans {
  dnsNames?: string[];
  ipAddresses?: string[];
  emailAddresses?: string[];
  uris?: string[];
}

const ipBytes = (address: string): Buffer => {
  if (isIPv4(address)) return Buffer.from(address.split('.').map(Number));
  // Expand `::` to the missing zero groups, then write the eight groups.
  const [head, tail] = address.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return Buffer.concat(groups.map((g) => Buffer.from(g.padStart(4, '0'), 'hex')));
};

function extensionRequest(sans: CertificateRequestSans | undefined): Buffer {
  const names = [
    ...(sans?.emailAddresses ?? []).map((e) => tlv(0x81, Buffer.from(e, 'latin1'))),
    ...(sans?.dnsNames ?? []).map((d) => tlv(0x82, Buffer.from(d, 'latin1'))),
    ...(sans?.uris ?? []).map((u) => tlv(0x86, Buffer.from(u, 'latin1'))),
    ...(sans?.ipAddresses ?? []).map((ip) => tlv(0x87, ipBytes(ip))),
  ];
  if (names.length === 0) return tlv(0xa0, Buffer.alloc(0));
  const san = seq(oid('2.5.29.17'), octets(seq(...names)));
  // attributes [0] { extensionRequest (PKCS#9) { Extensions { subjectAltName } } }
  return tlv(0xa0, seq(oid('1.2.840.113549.1.9.14'), set(seq(san))));
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
  const info = seq(
    tlv(0x02, Buffer.from([0])),
    seq(...rdns),
    spki,
    extensionRequest(subject.subjectAltNames),
  );
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

/**
 * What a kubelet puts in a CSR's spec.request: base64 of the PEM. A serving request carries the
 * node's host names and addresses as SANs; a client request carries none.
 */
export function kubeletCsrRequest(
  nodeName: string,
  subjectAltNames?: CertificateRequestSans,
): string {
  return Buffer.from(
    createCertificateRequestPem({
      commonName: `system:node:${nodeName}`,
      organizations: ['system:nodes'],
      ...(subjectAltNames ? { subjectAltNames } : {}),
    }),
  ).toString('base64');
}
