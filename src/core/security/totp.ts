/**
 * TOTP (RFC 6238 over RFC 4226's HOTP) with node:crypto: 6-digit codes of a 30-second step,
 * HMAC-SHA-1 by default (what every authenticator app reads from an otpauth:// URI). Secrets are
 * random bytes written in base32 (RFC 4648, no padding), as authenticator apps take them.
 */
import crypto from 'node:crypto';

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;

export type TotpAlgorithm = 'sha1' | 'sha256' | 'sha512';

export function base32Encode(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** The bytes of a base32 secret (case, spaces and padding ignored); undefined when it is not base32. */
export function base32Decode(text: string): Buffer | undefined {
  const clean = text.replace(/[\s=]/g, '').toUpperCase();
  if (clean.length === 0 || /[^A-Z2-7]/.test(clean)) return undefined;
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const char of clean) {
    value = (value << 5) | BASE32.indexOf(char);
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** A new random secret: 20 bytes (160 bits, RFC 4226's recommendation), in base32. */
export function newTotpSecret(): string {
  return base32Encode(crypto.randomBytes(20));
}

/** RFC 4226's HOTP value of `counter` under `key`. */
export function hotp(
  key: Buffer,
  counter: number,
  digits = TOTP_DIGITS,
  algorithm: TotpAlgorithm = 'sha1',
): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const digest = crypto.createHmac(algorithm, key).update(message).digest();
  const offset = digest[digest.length - 1] & 0x0f;
  const binary = digest.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, '0');
}

/** The time step of `at`. */
export function totpStepOf(at: Date, period = TOTP_PERIOD_SECONDS): number {
  return Math.floor(at.getTime() / 1000 / period);
}

/** The code of the step of `at`. */
export function totpCode(
  key: Buffer,
  at: Date,
  options: { digits?: number; algorithm?: TotpAlgorithm; period?: number } = {},
): string {
  return hotp(key, totpStepOf(at, options.period), options.digits, options.algorithm);
}

/**
 * The time step whose code `code` is, when it is the code of the step of `at` or of a neighbouring
 * one (a clock a little off); null otherwise. Compared in constant time.
 */
export function matchTotp(base32Secret: string, code: string, at: Date): number | null {
  const digits = code.replace(/\s/g, '');
  const key = base32Decode(base32Secret);
  if (!key || !/^\d{6}$/.test(digits)) return null;
  const current = totpStepOf(at);
  for (const step of [current, current - 1, current + 1]) {
    const expected = Buffer.from(hotp(key, step));
    if (crypto.timingSafeEqual(expected, Buffer.from(digits))) return step;
  }
  return null;
}

/** The otpauth:// URI an authenticator app scans (Key URI Format): `issuer:account`, SHA-1, 6 digits, 30 s. */
export function otpauthUri(options: { issuer: string; account: string; secret: string }): string {
  const label = `${encodeURIComponent(options.issuer)}:${encodeURIComponent(options.account)}`;
  const query = new URLSearchParams({
    secret: options.secret,
    issuer: options.issuer,
    algorithm: 'SHA1',
    digits: String(TOTP_DIGITS),
    period: String(TOTP_PERIOD_SECONDS),
  });
  return `otpauth://totp/${label}?${query.toString()}`;
}
