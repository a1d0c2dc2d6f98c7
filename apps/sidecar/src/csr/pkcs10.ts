import { createPublicKey, verify } from 'node:crypto';

/**
 * Just enough DER to read a PKCS#10 CertificationRequest (RFC 2986): the subject's CN and O, the
 * subjectAltName of its extensionRequest, and whether the request is signed by the key it
 * carries. node:crypto parses certificates but not certificate requests, and a CSR's subject is
 * the only place a kubelet client CSR names its node.
 */
export interface CertificateRequestInfo {
  commonName?: string;
  organizations: string[];
  /** What the certificate would be valid for: every one must belong to the node. */
  subjectAltNames: SubjectAltNames;
  /** The signature verifies with the request's own public key (proof of possession). */
  signatureValid: boolean;
}

export interface SubjectAltNames {
  dnsNames: string[];
  /** Dotted IPv4, or IPv6 in its compressed form (as `new URL` writes it). */
  ipAddresses: string[];
  emailAddresses: string[];
  uris: string[];
  /** GeneralNames of any other kind (otherName, directoryName, registeredID …). */
  others: number;
}

export class CertificateRequestParseError extends Error {}

interface Tlv {
  tag: number;
  /** Start of the whole element (tag byte). */
  start: number;
  /** Start and end of the contents. */
  contentStart: number;
  end: number;
}

function readTlv(der: Buffer, offset: number, limit = der.length): Tlv {
  if (offset + 2 > limit) throw new CertificateRequestParseError('truncated DER element');
  const tag = der[offset]!;
  let length = der[offset + 1]!;
  let contentStart = offset + 2;
  if (length & 0x80) {
    const bytes = length & 0x7f;
    if (bytes === 0 || bytes > 4) throw new CertificateRequestParseError('unsupported DER length');
    if (contentStart + bytes > limit)
      throw new CertificateRequestParseError('truncated DER length');
    length = 0;
    for (let i = 0; i < bytes; i++) length = length * 256 + der[contentStart + i]!;
    contentStart += bytes;
  }
  const end = contentStart + length;
  if (end > limit) throw new CertificateRequestParseError('DER element overruns its parent');
  return { tag, start: offset, contentStart, end };
}

function children(der: Buffer, parent: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let offset = parent.contentStart; offset < parent.end;) {
    const child = readTlv(der, offset, parent.end);
    out.push(child);
    offset = child.end;
  }
  return out;
}

const SEQUENCE = 0x30;
const SET = 0x31;
const OID = 0x06;
const BIT_STRING = 0x03;

function expect(tlv: Tlv | undefined, tag: number, what: string): Tlv {
  if (!tlv || tlv.tag !== tag) throw new CertificateRequestParseError(`expected ${what}`);
  return tlv;
}

function oid(der: Buffer, tlv: Tlv): string {
  const bytes = der.subarray(tlv.contentStart, tlv.end);
  if (bytes.length === 0) throw new CertificateRequestParseError('empty OID');
  const parts = [Math.floor(bytes[0]! / 40), bytes[0]! % 40];
  let value = 0;
  for (let i = 1; i < bytes.length; i++) {
    value = value * 128 + (bytes[i]! & 0x7f);
    if (!(bytes[i]! & 0x80)) {
      parts.push(value);
      value = 0;
    }
  }
  return parts.join('.');
}

const OID_COMMON_NAME = '2.5.4.3';
const OID_EXTENSION_REQUEST = '1.2.840.113549.1.9.14';
const OID_SUBJECT_ALT_NAME = '2.5.29.17';
const OCTET_STRING = 0x04;
const ATTRIBUTES = 0xa0;
const OID_ORGANIZATION = '2.5.4.10';
/** Signature algorithms a kubelet uses (ECDSA P-256 by default, RSA when configured). */
const SIGNATURE_HASHES: Record<string, string> = {
  '1.2.840.10045.4.3.2': 'sha256',
  '1.2.840.10045.4.3.3': 'sha384',
  '1.2.840.10045.4.3.4': 'sha512',
  '1.2.840.113549.1.1.11': 'sha256',
  '1.2.840.113549.1.1.12': 'sha384',
  '1.2.840.113549.1.1.13': 'sha512',
  '1.3.101.112': '',
};

/** Strings in a Name are UTF8String, PrintableString, IA5String or (rarely) BMPString. */
function directoryString(der: Buffer, tlv: Tlv): string {
  const bytes = der.subarray(tlv.contentStart, tlv.end);
  if (tlv.tag === 0x1e) return Buffer.from(bytes).swap16().toString('utf16le');
  return bytes.toString(tlv.tag === 0x0c ? 'utf8' : 'latin1');
}

/** Parses a CSR's `spec.request`: base64 of a PEM `CERTIFICATE REQUEST` block. */
export function parseCertificateRequest(pem: string): CertificateRequestInfo {
  const match =
    /-----BEGIN (?:NEW )?CERTIFICATE REQUEST-----([A-Za-z0-9+/=\s]+)-----END (?:NEW )?CERTIFICATE REQUEST-----/.exec(
      pem,
    );
  if (!match?.[1]) throw new CertificateRequestParseError('no CERTIFICATE REQUEST PEM block');
  const der = Buffer.from(match[1].replace(/\s+/g, ''), 'base64');
  const root = expect(readTlv(der, 0), SEQUENCE, 'CertificationRequest');
  const [info, algorithm, signature] = children(der, root);
  const infoTlv = expect(info, SEQUENCE, 'CertificationRequestInfo');
  const [, subject, spki, attributes] = children(der, infoTlv);
  const subjectTlv = expect(subject, SEQUENCE, 'subject Name');

  let commonName: string | undefined;
  const organizations: string[] = [];
  for (const rdn of children(der, subjectTlv)) {
    expect(rdn, SET, 'RelativeDistinguishedName');
    for (const atv of children(der, rdn)) {
      const [type, value] = children(der, expect(atv, SEQUENCE, 'AttributeTypeAndValue'));
      const id = oid(der, expect(type, OID, 'attribute type'));
      if (!value) throw new CertificateRequestParseError('attribute without value');
      if (id === OID_COMMON_NAME) commonName = directoryString(der, value);
      if (id === OID_ORGANIZATION) organizations.push(directoryString(der, value));
    }
  }

  const subjectAltNames: SubjectAltNames = {
    dnsNames: [],
    ipAddresses: [],
    emailAddresses: [],
    uris: [],
    others: 0,
  };
  if (attributes)
    readExtensionRequest(der, expect(attributes, ATTRIBUTES, 'attributes'), subjectAltNames);

  let signatureValid = false;
  try {
    const spkiTlv = expect(spki, SEQUENCE, 'SubjectPublicKeyInfo');
    const [algorithmId] = children(der, expect(algorithm, SEQUENCE, 'signature algorithm'));
    const algorithmOid = oid(der, expect(algorithmId, OID, 'algorithm OID'));
    const hash = SIGNATURE_HASHES[algorithmOid];
    const sig = expect(signature, BIT_STRING, 'signature');
    if (hash !== undefined && der[sig.contentStart] === 0) {
      const key = createPublicKey({
        key: der.subarray(spkiTlv.start, spkiTlv.end),
        format: 'der',
        type: 'spki',
      });
      // The algorithm must be the key's own: node would verify an RSA signature under an ECDSA OID.
      const family = algorithmOid.startsWith('1.2.840.10045.')
        ? 'ec'
        : algorithmOid.startsWith('1.2.840.113549.')
          ? 'rsa'
          : 'ed25519';
      signatureValid =
        key.asymmetricKeyType === family &&
        verify(
          hash || null,
          der.subarray(infoTlv.start, infoTlv.end),
          key,
          der.subarray(sig.contentStart + 1, sig.end),
        );
    }
  } catch {
    signatureValid = false;
  }
  return {
    ...(commonName !== undefined ? { commonName } : {}),
    organizations,
    subjectAltNames,
    signatureValid,
  };
}

/** attributes [0] → extensionRequest → Extensions → subjectAltName → GeneralNames (RFC 5280). */
function readExtensionRequest(der: Buffer, attributes: Tlv, into: SubjectAltNames): void {
  for (const attribute of children(der, attributes)) {
    const [type, values] = children(der, expect(attribute, SEQUENCE, 'attribute'));
    if (oid(der, expect(type, OID, 'attribute type')) !== OID_EXTENSION_REQUEST) continue;
    for (const extensions of children(der, expect(values, SET, 'attribute values'))) {
      for (const extension of children(der, expect(extensions, SEQUENCE, 'Extensions'))) {
        const parts = children(der, expect(extension, SEQUENCE, 'Extension'));
        if (oid(der, expect(parts[0], OID, 'extension id')) !== OID_SUBJECT_ALT_NAME) continue;
        const value = expect(parts.at(-1), OCTET_STRING, 'extension value');
        const names = expect(readTlv(der, value.contentStart, value.end), SEQUENCE, 'GeneralNames');
        for (const name of children(der, names)) readGeneralName(der, name, into);
      }
    }
  }
}

function readGeneralName(der: Buffer, name: Tlv, into: SubjectAltNames): void {
  const bytes = der.subarray(name.contentStart, name.end);
  switch (name.tag) {
    case 0x81:
      into.emailAddresses.push(bytes.toString('latin1'));
      return;
    case 0x82:
      into.dnsNames.push(bytes.toString('latin1'));
      return;
    case 0x86:
      into.uris.push(bytes.toString('latin1'));
      return;
    case 0x87:
      into.ipAddresses.push(ipAddress(bytes));
      return;
    default:
      into.others++;
  }
}

function ipAddress(bytes: Buffer): string {
  if (bytes.length === 4) return [...bytes].join('.');
  if (bytes.length !== 16)
    throw new CertificateRequestParseError('iPAddress is neither 4 nor 16 bytes');
  const groups = Array.from({ length: 8 }, (_, i) => bytes.readUInt16BE(i * 2).toString(16));
  return canonicalIp(groups.join(':'));
}

/** One spelling per address, so a SAN and a cloud address compare as strings. */
export function canonicalIp(address: string): string {
  if (!address.includes(':')) return address;
  try {
    return new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return address;
  }
}

/** `spec.request` as the API returns it (base64 of the PEM). */
export function parseCsrRequestField(request: string): CertificateRequestInfo {
  return parseCertificateRequest(Buffer.from(request, 'base64').toString('utf8'));
}
