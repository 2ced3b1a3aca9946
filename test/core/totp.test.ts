/**
 * TOTP as authenticator apps compute it: RFC 6238's test vectors (Appendix B) for SHA-1, SHA-256
 * and SHA-512 with 8 digits, base32 both ways (RFC 4648's vectors), and the 6-digit match that
 * sign-in uses: the current step and its neighbours accepted, anything else refused.
 */
import { describe, expect, it } from 'vitest';
import {
  base32Decode,
  base32Encode,
  matchTotp,
  otpauthUri,
  type TotpAlgorithm,
  totpCode,
} from '../../src/core/security/totp.js';

const SEEDS: Record<TotpAlgorithm, Buffer> = {
  sha1: Buffer.from('12345678901234567890'),
  sha256: Buffer.from('12345678901234567890123456789012'),
  sha512: Buffer.from('1234567890123456789012345678901234567890123456789012345678901234'),
};

const VECTORS: [number, string, string, string][] = [
  [59, '94287082', '46119246', '90693936'],
  [1111111109, '07081804', '68084774', '25091201'],
  [1111111111, '14050471', '67062674', '99943326'],
  [1234567890, '89005924', '91819424', '93441116'],
  [2000000000, '69279037', '90698825', '38618901'],
  [20000000000, '65353130', '77737706', '47863826'],
];

describe('TOTP (RFC 6238)', () => {
  it.each(VECTORS)('at %i s gives the RFC codes', (seconds, sha1, sha256, sha512) => {
    const at = new Date(seconds * 1000);
    expect(totpCode(SEEDS.sha1, at, { digits: 8, algorithm: 'sha1' })).toBe(sha1);
    expect(totpCode(SEEDS.sha256, at, { digits: 8, algorithm: 'sha256' })).toBe(sha256);
    expect(totpCode(SEEDS.sha512, at, { digits: 8, algorithm: 'sha512' })).toBe(sha512);
  });

  it('writes and reads base32 as RFC 4648 does', () => {
    const cases: [string, string][] = [
      ['f', 'MY'],
      ['fo', 'MZXQ'],
      ['foo', 'MZXW6'],
      ['foob', 'MZXW6YQ'],
      ['fooba', 'MZXW6YTB'],
      ['foobar', 'MZXW6YTBOI'],
    ];
    for (const [text, encoded] of cases) {
      expect(base32Encode(Buffer.from(text))).toBe(encoded);
      expect(base32Decode(`${encoded.toLowerCase()}==`)?.toString()).toBe(text);
    }
    expect(base32Decode('not base32!')).toBeUndefined();
    expect(base32Decode('')).toBeUndefined();
  });

  it('matches the 6-digit code of the current step and its neighbours only', () => {
    const secret = base32Encode(SEEDS.sha1);
    const at = new Date(1111111111 * 1000);
    const step = Math.floor(1111111111 / 30);
    const codeAt = (offset: number) => totpCode(SEEDS.sha1, new Date(at.getTime() + offset * 30_000));
    expect(matchTotp(secret, codeAt(0), at)).toBe(step);
    expect(matchTotp(secret, codeAt(-1), at)).toBe(step - 1);
    expect(matchTotp(secret, codeAt(1), at)).toBe(step + 1);
    expect(matchTotp(secret, codeAt(2), at)).toBeNull();
    expect(matchTotp(secret, codeAt(-2), at)).toBeNull();
    expect(matchTotp(secret, `${codeAt(0).slice(0, 3)} ${codeAt(0).slice(3)}`, at)).toBe(step);
    expect(matchTotp(secret, '12345', at)).toBeNull();
    expect(matchTotp(secret, 'abcdef', at)).toBeNull();
  });

  it('writes the otpauth:// URI authenticator apps scan', () => {
    const uri = new URL(
      otpauthUri({ issuer: 'Acme Cloud', account: 'ops@acme.example', secret: 'JBSWY3DPEHPK3PXP' }),
    );
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.host).toBe('totp');
    expect(decodeURIComponent(uri.pathname)).toBe('/Acme Cloud:ops@acme.example');
    expect(Object.fromEntries(uri.searchParams)).toEqual({
      secret: 'JBSWY3DPEHPK3PXP',
      issuer: 'Acme Cloud',
      algorithm: 'SHA1',
      digits: '6',
      period: '30',
    });
  });
});
