import { describe, expect, it } from '@jest/globals';
import { createCertificateRequestPem, kubeletCsrRequest } from '@fleet/testing';
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { parseCertificateRequest, parseCsrRequestField } from './pkcs10.js';

describe('PKCS#10 reader', () => {
  it('reads the subject of a kubelet client CSR and checks its signature', () => {
    const info = parseCsrRequestField(kubeletCsrRequest('ip-10-0-1-23.ec2.internal'));
    expect(info).toEqual({
      commonName: 'system:node:ip-10-0-1-23.ec2.internal',
      organizations: ['system:nodes'],
      subjectAltNames: { dnsNames: [], ipAddresses: [], emailAddresses: [], uris: [], others: 0 },
      signatureValid: true,
    });
  });

  it('reads every subjectAltName a serving request carries', () => {
    const pem = createCertificateRequestPem({
      commonName: 'system:node:ip-10-0-1-23.ec2.internal',
      organizations: ['system:nodes'],
      subjectAltNames: {
        dnsNames: ['ip-10-0-1-23.ec2.internal', 'other.example'],
        ipAddresses: ['10.0.1.23', '2600:1f18:0:0:0:0:0:a'],
        emailAddresses: ['root@example.com'],
        uris: ['spiffe://cluster/x'],
      },
    });
    expect(parseCertificateRequest(pem)).toMatchObject({
      subjectAltNames: {
        dnsNames: ['ip-10-0-1-23.ec2.internal', 'other.example'],
        ipAddresses: ['10.0.1.23', '2600:1f18::a'],
        emailAddresses: ['root@example.com'],
        uris: ['spiffe://cluster/x'],
        others: 0,
      },
      signatureValid: true,
    });
  });

  it('reads an RSA-signed request and long (multi-byte length) names', () => {
    const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const long = `system:node:${'a'.repeat(200)}`;
    const pem = createCertificateRequestPem({ commonName: long }, keys);
    expect(parseCertificateRequest(pem)).toMatchObject({ commonName: long, signatureValid: true });
  });

  it('flags a request whose subject was altered after signing', () => {
    const pem = createCertificateRequestPem({ commonName: 'system:node:aaaa' });
    const der = Buffer.from(pem.split('\n').slice(1, -2).join(''), 'base64');
    const at = der.indexOf(Buffer.from('aaaa'));
    der.write('bbbb', at);
    const forged = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
    expect(parseCertificateRequest(forged)).toMatchObject({
      commonName: 'system:node:bbbb',
      signatureValid: false,
    });
  });

  it('reads what openssl makes, when openssl is installed', () => {
    let pem: string;
    try {
      pem = execFileSync(
        'openssl',
        [
          'req',
          '-new',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-keyout',
          '/dev/null',
          '-subj',
          '/O=system:nodes/CN=system:node:ip-10-0-9-9.ec2.internal',
          '-addext',
          'subjectAltName=DNS:ip-10-0-9-9.ec2.internal,IP:10.0.9.9',
        ],
        { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
      );
    } catch {
      // Without openssl the writer above is the only source of requests; the cases above cover it.
      pem = createCertificateRequestPem({
        commonName: 'system:node:ip-10-0-9-9.ec2.internal',
        organizations: ['system:nodes'],
        subjectAltNames: { dnsNames: ['ip-10-0-9-9.ec2.internal'], ipAddresses: ['10.0.9.9'] },
      });
    }
    expect(parseCertificateRequest(pem)).toEqual({
      commonName: 'system:node:ip-10-0-9-9.ec2.internal',
      organizations: ['system:nodes'],
      subjectAltNames: {
        dnsNames: ['ip-10-0-9-9.ec2.internal'],
        ipAddresses: ['10.0.9.9'],
        emailAddresses: [],
        uris: [],
        others: 0,
      },
      signatureValid: true,
    });
  });

  it('refuses what is not a certificate request', () => {
    expect(() => parseCertificateRequest('hello')).toThrow('no CERTIFICATE REQUEST PEM block');
    expect(() =>
      parseCertificateRequest(
        '-----BEGIN CERTIFICATE REQUEST-----\nMAM=\n-----END CERTIFICATE REQUEST-----',
      ),
    ).toThrow();
  });
});
