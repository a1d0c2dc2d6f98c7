/**
 * A tiny DER writer (X.690), enough for PKCS#10 requests and X.509 certificates: node:crypto
 * signs and verifies but cannot build either.
 */
export function tlv(tag: number, content: Buffer): Buffer {
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

export const seq = (...items: Buffer[]): Buffer => tlv(0x30, Buffer.concat(items));
export const set = (...items: Buffer[]): Buffer => tlv(0x31, Buffer.concat(items));
export const utf8 = (s: string): Buffer => tlv(0x0c, Buffer.from(s, 'utf8'));
export const octets = (b: Buffer): Buffer => tlv(0x04, b);
export const bool = (v: boolean): Buffer => tlv(0x01, Buffer.from([v ? 0xff : 0]));
/** A BIT STRING with no unused bits (keys, signatures). */
export const bits = (b: Buffer, unused = 0): Buffer =>
  tlv(0x03, Buffer.concat([Buffer.from([unused]), b]));
/** Context-specific constructed tag `[n] EXPLICIT`. */
export const explicit = (n: number, content: Buffer): Buffer => tlv(0xa0 | n, content);

/** A non-negative INTEGER from big-endian bytes (a leading zero keeps it positive). */
export function unsigned(bytes: Buffer): Buffer {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  const b = bytes.subarray(i);
  return tlv(0x02, b[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b);
}

export function oid(dotted: string): Buffer {
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

/** UTCTime (RFC 5280 requires it for dates before 2050). */
export function utcTime(d: Date): Buffer {
  const iso = d.toISOString(); // 2026-11-30T20:34:36.123Z
  const s = `${iso.slice(2, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  return tlv(0x17, Buffer.from(s, 'ascii'));
}

export function pem(label: string, der: Buffer): string {
  const body = der.toString('base64').replace(/(.{64})/g, '$1\n');
  return `-----BEGIN ${label}-----\n${body.trimEnd()}\n-----END ${label}-----\n`;
}
