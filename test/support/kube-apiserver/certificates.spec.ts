import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { CertificateAuthority } from './certificates.js';

describe('CertificateAuthority', () => {
  const ca = new CertificateAuthority();
  const serving = ca.issueServing(['127.0.0.1', 'localhost', '::1']);

  it('is a self-signed CA that signed the serving certificate', () => {
    const caCert = new X509Certificate(ca.certPem);
    const leaf = new X509Certificate(serving.certPem);
    expect(caCert.ca).toBe(true);
    expect(caCert.verify(ca.publicKey)).toBe(true);
    expect(leaf.ca).toBe(false);
    expect(leaf.checkIssued(caCert)).toBe(true);
    expect(leaf.verify(ca.publicKey)).toBe(true);
    expect(leaf.verify(serving.publicKey)).toBe(false);
  });

  it('names every host in subjectAltName and nothing else', () => {
    const leaf = new X509Certificate(serving.certPem);
    expect(leaf.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(leaf.checkIP('::1')).toBe('::1');
    expect(leaf.checkHost('localhost')).toBe('localhost');
    expect(leaf.checkHost('example.com')).toBeUndefined();
    expect(leaf.checkIP('10.0.0.1')).toBeUndefined();
    expect(new Date(leaf.validFrom).getTime()).toBeLessThan(Date.now());
  });

  it('passes openssl verify for TLS server use (what strict clients check)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'emulator-ca-'));
    try {
      writeFileSync(join(dir, 'ca.pem'), ca.certPem);
      writeFileSync(join(dir, 'leaf.pem'), serving.certPem);
      const out = execFileSync(
        'openssl',
        ['verify', '-purpose', 'sslserver', '-x509_strict', '-CAfile', 'ca.pem', 'leaf.pem'],
        { cwd: dir, encoding: 'utf8' },
      );
      expect(out.trim()).toBe('leaf.pem: OK');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
