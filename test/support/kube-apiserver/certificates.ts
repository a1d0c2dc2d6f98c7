import {
  createHash,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  sign,
  type KeyObject,
} from 'node:crypto';
import { isIP } from 'node:net';

import {
  bits,
  bool,
  explicit,
  octets,
  oid,
  pem,
  seq,
  set,
  tlv,
  unsigned,
  utcTime,
  utf8,
} from '../der.js';

// X.509 v3 certificates (RFC 5280) for the emulator's own CA and serving certificate, built with
// node:crypto's keys and signatures. Clients verify them for real: Go's crypto/x509 (kubectl)
// requires the CA's basicConstraints and keyCertSign usage and the leaf's subjectAltName.

const ECDSA_SHA256 = seq(oid('1.2.840.10045.4.3.2'));
const EXT = {
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
};

const extension = (id: string, critical: boolean, value: Buffer): Buffer =>
  critical ? seq(oid(id), bool(true), octets(value)) : seq(oid(id), octets(value));

const name = (commonName: string, organizations: string | readonly string[] = []): Buffer =>
  seq(
    ...(typeof organizations === 'string' ? [organizations] : organizations).map((o) =>
      set(seq(oid('2.5.4.10'), utf8(o))),
    ),
    set(seq(oid('2.5.4.3'), utf8(commonName))),
  );

/** RFC 5280 §4.2.1.2 method (1): SHA-1 of the subjectPublicKey bits. */
function keyIdentifier(publicKey: KeyObject): Buffer {
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  // The EC P-256 SPKI is a fixed 26-byte header followed by the 66-byte BIT STRING content
  // (one unused-bits byte, then the 65-byte point).
  return createHash('sha1')
    .update(spki.subarray(spki.length - 65))
    .digest();
}

function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  const [head = '', tail = ''] = ip.split('::');
  const groups = (s: string) => (s ? s.split(':') : []);
  const h = groups(head);
  const t = groups(tail);
  const all = ip.includes('::')
    ? [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t]
    : h;
  return Buffer.concat(all.map((g) => Buffer.from(g.padStart(4, '0'), 'hex')));
}

interface Issued {
  certPem: string;
  keyPem: string;
  publicKey: KeyObject;
  privateKey: KeyObject;
}

function issue(options: {
  subject: Buffer;
  issuer: Buffer;
  publicKey: KeyObject;
  signer: KeyObject;
  extensions: Buffer[];
  days: number;
}): string {
  const now = Date.now();
  const serial = randomBytes(16);
  serial[0]! &= 0x7f;
  serial[0]! |= 0x01;
  const tbs = seq(
    explicit(0, unsigned(Buffer.from([2]))),
    unsigned(serial),
    ECDSA_SHA256,
    options.issuer,
    // Backdated an hour: a client whose clock is a little behind still accepts it.
    seq(utcTime(new Date(now - 3_600_000)), utcTime(new Date(now + options.days * 86_400_000))),
    options.subject,
    options.publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, seq(...options.extensions)),
  );
  const signature = sign('sha256', tbs, options.signer);
  return pem('CERTIFICATE', seq(tbs, ECDSA_SHA256, bits(signature)));
}

const ecKeys = () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' });

/** One DER element: its tag, its whole encoding and its content. */
interface Element {
  tag: number;
  raw: Buffer;
  content: Buffer;
}

function readElement(der: Buffer, at = 0): Element {
  const tag = der[at]!;
  let length = der[at + 1]!;
  let offset = at + 2;
  if (length & 0x80) {
    const bytes = length & 0x7f;
    length = 0;
    for (let i = 0; i < bytes; i++) length = length * 256 + der[offset + i]!;
    offset += bytes;
  }
  return {
    tag,
    raw: der.subarray(at, offset + length),
    content: der.subarray(offset, offset + length),
  };
}

function children(content: Buffer): Element[] {
  const out: Element[] = [];
  for (let at = 0; at < content.length;) {
    const e = readElement(content, at);
    out.push(e);
    at += e.raw.length;
  }
  return out;
}

/** The common name and organizations of a PKCS#10 request's subject. */
export function certificateRequestSubject(requestPem: string): {
  commonName: string;
  organizations: string[];
} {
  const { subject } = certificateRequestParts(requestPem);
  let commonName = '';
  const organizations: string[] = [];
  for (const rdn of children(readElement(subject).content))
    for (const attribute of children(rdn.content)) {
      const [type, value] = children(attribute.content);
      const text = value?.content.toString('utf8') ?? '';
      if (type?.raw.equals(oid('2.5.4.3'))) commonName = text;
      if (type?.raw.equals(oid('2.5.4.10'))) organizations.push(text);
    }
  return { commonName, organizations };
}

/**
 * What a certificate for a PKCS#10 request is made of: its subject and public key as sent, and
 * the subjectAltName extension of its extensionRequest, if any.
 */
function certificateRequestParts(requestPem: string): {
  subject: Buffer;
  publicKey: KeyObject;
  subjectAltName?: Buffer;
} {
  const der = Buffer.from(
    requestPem.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, ''),
    'base64',
  );
  const [info] = children(readElement(der).content);
  const [, subject, spki, attributes] = children(info!.content);
  let subjectAltName: Buffer | undefined;
  for (const attribute of attributes?.tag === 0xa0 ? children(attributes.content) : []) {
    const [, values] = children(attribute.content);
    for (const extensions of children(values?.content ?? Buffer.alloc(0)))
      for (const ext of children(extensions.content)) {
        const parts = children(ext.content);
        if (parts[0]?.raw.equals(oid(EXT.subjectAltName))) subjectAltName = parts.at(-1)?.content;
      }
  }
  return {
    subject: subject!.raw,
    publicKey: createPublicKey({ key: spki!.raw, format: 'der', type: 'spki' }),
    ...(subjectAltName ? { subjectAltName } : {}),
  };
}

/** A self-signed CA (one per emulator) that signs the emulator's serving certificate. */
export class CertificateAuthority {
  readonly certPem: string;
  private readonly keys = ecKeys();
  private readonly subject: Buffer;

  constructor(commonName = `kube-apiserver-emulator-ca@${Math.floor(Date.now() / 1000)}`) {
    this.subject = name(commonName, 'kube-apiserver-emulator');
    this.certPem = issue({
      subject: this.subject,
      issuer: this.subject,
      publicKey: this.keys.publicKey,
      signer: this.keys.privateKey,
      days: 3650,
      extensions: [
        extension(EXT.basicConstraints, true, seq(bool(true))),
        // digitalSignature, keyCertSign, cRLSign
        extension(EXT.keyUsage, true, bits(Buffer.from([0x86]), 1)),
        extension(EXT.subjectKeyIdentifier, false, octets(keyIdentifier(this.keys.publicKey))),
      ],
    });
  }

  /** A serving certificate for `hosts` (DNS names and IP addresses), as kube-apiserver has. */
  issueServing(hosts: string[], commonName = hosts[0] ?? 'localhost'): Issued {
    const san = hosts.map((h) => (isIP(h) ? tlv(0x87, ipBytes(h)) : tlv(0x82, Buffer.from(h))));
    // serverAuth, and the names it serves
    return this.issueLeaf(name(commonName), '1.3.6.1.5.5.7.3.1', [
      extension(EXT.subjectAltName, false, seq(...san)),
    ]);
  }

  /**
   * A client certificate as kube-apiserver's x509 authenticator reads it: the common name is the
   * user, each organization a group (`system:masters`, `system:nodes`).
   */
  issueClient(commonName: string, organizations: readonly string[] = []): Issued {
    // clientAuth
    return this.issueLeaf(name(commonName, organizations), '1.3.6.1.5.5.7.3.2');
  }

  /**
   * Signs a PKCS#10 request as kube-controller-manager's CSR signer does: its subject, key and
   * subject alternative names, for one extended key usage, a year.
   */
  signRequest(requestPem: string, extKeyUsage: 'serverAuth' | 'clientAuth'): string {
    const request = certificateRequestParts(requestPem);
    return issue({
      subject: request.subject,
      issuer: this.subject,
      publicKey: request.publicKey,
      signer: this.keys.privateKey,
      days: 365,
      extensions: [
        extension(EXT.basicConstraints, true, seq()),
        // digitalSignature, keyEncipherment
        extension(EXT.keyUsage, true, bits(Buffer.from([0xa0]), 5)),
        extension(
          EXT.extKeyUsage,
          false,
          seq(oid(extKeyUsage === 'serverAuth' ? '1.3.6.1.5.5.7.3.1' : '1.3.6.1.5.5.7.3.2')),
        ),
        ...(request.subjectAltName
          ? [extension(EXT.subjectAltName, false, request.subjectAltName)]
          : []),
        extension(
          EXT.authorityKeyIdentifier,
          false,
          seq(tlv(0x80, keyIdentifier(this.keys.publicKey))),
        ),
      ],
    });
  }

  /** A leaf certificate of a new key, for one extended key usage. */
  private issueLeaf(subject: Buffer, extKeyUsage: string, extra: Buffer[] = []): Issued {
    const keys = ecKeys();
    const certPem = issue({
      subject,
      issuer: this.subject,
      publicKey: keys.publicKey,
      signer: this.keys.privateKey,
      days: 365,
      extensions: [
        extension(EXT.basicConstraints, true, seq()),
        // digitalSignature, keyEncipherment
        extension(EXT.keyUsage, true, bits(Buffer.from([0xa0]), 5)),
        extension(EXT.extKeyUsage, false, seq(oid(extKeyUsage))),
        ...extra,
        extension(
          EXT.authorityKeyIdentifier,
          false,
          seq(tlv(0x80, keyIdentifier(this.keys.publicKey))),
        ),
      ],
    });
    return {
      certPem,
      keyPem: keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      publicKey: keys.publicKey,
      privateKey: keys.privateKey,
    };
  }

  get publicKey(): KeyObject {
    return this.keys.publicKey;
  }

  /** The CA's own key (PKCS #8), for a real kube-controller-manager's CSR signer. */
  get keyPem(): string {
    return this.keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  }
}
