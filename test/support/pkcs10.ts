import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';

/**
 * A tiny DER writer for PKCS#10 certificate requests (RFC 2986), signed with a real key, so tests
 * and the demo hand the sidecar the same bytes a kubelet would. node:crypto cannot create CSRs.
 */
function tlv(tag: number, content: Buffer): Buffer {
  const n = content.length;
  let length: Buffer;
  if (n < 0x80) length = Buffer.from([n]);
  else {
    const bytes: number[] = [];
    for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v % 256);
    length = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), length, content]);
}

const seq = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]) => tlv(0x31, Buffer.concat(items));

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const bytes = [a! * 40 + b!];
  for (const part of rest) {
    const chunk: number[] = [];
    let v = part;
    do {
      chunk.unshift(v & 0x7f);
      v = Math.floor(v / 128);
    } while (v > 0);
    for (let i = 0; i < chunk.length - 1; i++) chunk[i]! |= 0x80;
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

const utf8 = (s: string) => tlv(0x0c, Buffer.from(s, 'utf8'));

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
  const body = der.toString('base64').replace(/(.{64})/g, '$1\n');
  return `-----BEGIN CERTIFICATE REQUEST-----\n${body.trimEnd()}\n-----END CERTIFICATE REQUEST-----\n`;
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
