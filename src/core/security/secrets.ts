/**
 * Third-party secrets at rest (a tenant's SMTP password; later event-endpoint secrets and engine
 * credentials): sealed with AES-256-GCM under a key from the environment, so a copy of the
 * database alone reveals none of them.
 *
 * A sealed value is `v1:<key id>:<iv>:<ciphertext and tag>` (base64url). The key id (derived from
 * the key) says which key sealed it, so several keys can be read at once while they rotate:
 * SECRETS_KEY seals, SECRETS_KEY_PREVIOUS (a comma list) only opens. Each value is bound to its
 * place (`context`, e.g. the tenant and column) as additional data: a sealed value copied to
 * another row or column does not open.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

export interface SecretKeys {
  /** Seals new values. */
  current: Buffer;
  /** Still open values sealed before a rotation. */
  previous: Buffer[];
}

export interface SecretBox {
  seal(plaintext: string, context: string): string;
  /** Throws SecretError when the value was sealed with an unknown key, altered, or moved. */
  open(sealed: string, context: string): string;
  /** True when the value was sealed with the current key (false: seal it again after a rotation). */
  isCurrent(sealed: string): boolean;
  /** The id of the current key, as it appears in sealed values. */
  readonly currentKeyId: string;
  /**
   * A key for one purpose (e.g. signing CSRF tokens), derived from the current key with HKDF:
   * the same in every process that shares SECRETS_KEY, and useless for opening sealed values.
   */
  deriveKey(purpose: string): Buffer;
}

export class SecretError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretError';
  }
}

/** Not secret: a hash of the key, so a sealed value names its key without revealing it. */
export function keyIdOf(key: Buffer): string {
  return crypto
    .createHash('sha256')
    .update('voiceplane secrets key id\n')
    .update(key)
    .digest('base64url')
    .slice(0, 8);
}

/**
 * A 32-byte key written as 64 hex digits or as base64/base64url (`openssl rand -base64 32`);
 * returns undefined for anything else, so config can name the variable in its message.
 */
export function parseSecretKey(text: string): Buffer | undefined {
  const value = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(value)) {
    const key = Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (key.length === KEY_BYTES) return key;
  }
  return undefined;
}

export function createSecretBox(keys: SecretKeys): SecretBox {
  if (keys.current.length !== KEY_BYTES) throw new Error('a secrets key must be 32 bytes');
  const byId = new Map<string, Buffer>();
  for (const key of [...keys.previous, keys.current]) byId.set(keyIdOf(key), key);
  const currentKeyId = keyIdOf(keys.current);
  const additionalData = (keyId: string, context: string) => Buffer.from(`${VERSION}:${keyId}:${context}`);

  return {
    currentKeyId,
    seal(plaintext, context) {
      const iv = crypto.randomBytes(IV_BYTES);
      const cipher = crypto.createCipheriv('aes-256-gcm', keys.current, iv);
      cipher.setAAD(additionalData(currentKeyId, context));
      const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return `${VERSION}:${currentKeyId}:${iv.toString('base64url')}:${sealed.toString('base64url')}`;
    },
    open(sealed, context) {
      const parts = sealed.split(':');
      if (parts.length !== 4 || parts[0] !== VERSION) throw new SecretError('not a sealed secret');
      const [, keyId, ivText, bodyText] = parts;
      const key = byId.get(keyId);
      if (!key) {
        throw new SecretError(
          `sealed with key ${keyId}, which is neither SECRETS_KEY nor in SECRETS_KEY_PREVIOUS`,
        );
      }
      const iv = Buffer.from(ivText, 'base64url');
      const body = Buffer.from(bodyText, 'base64url');
      if (iv.length !== IV_BYTES || body.length < TAG_BYTES)
        throw new SecretError('a sealed secret is malformed');
      try {
        const decipher = crypto.createDecipheriv('aes-256-gcm', key, iv);
        decipher.setAAD(additionalData(keyId, context));
        decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
        return Buffer.concat([
          decipher.update(body.subarray(0, body.length - TAG_BYTES)),
          decipher.final(),
        ]).toString('utf8');
      } catch {
        throw new SecretError('a sealed secret was altered or belongs elsewhere (authentication failed)');
      }
    },
    isCurrent(sealed) {
      return sealed.startsWith(`${VERSION}:${currentKeyId}:`);
    },
    deriveKey(purpose) {
      return Buffer.from(
        crypto.hkdfSync('sha256', keys.current, Buffer.alloc(0), `voiceplane:${purpose}`, 32),
      );
    },
  };
}

/** The key file an embedded database uses when SECRETS_KEY is unset (kept beside, not inside, pgdata). */
export const KEY_FILE_NAME = 'secrets.key';

/**
 * Reads DATA_DIR/secrets.key, creating it (random, mode 0600) on first use; `created` tells the
 * caller to warn that this key must be kept with the data directory's backups.
 */
export function dataDirSecretKey(dataDir: string): { key: Buffer; file: string; created: boolean } {
  const file = path.join(path.resolve(dataDir), KEY_FILE_NAME);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  try {
    fs.writeFileSync(file, `${crypto.randomBytes(KEY_BYTES).toString('base64')}\n`, {
      flag: 'wx',
      mode: 0o600,
    });
    return { key: readKeyFile(file), file, created: true };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return { key: readKeyFile(file), file, created: false };
}

function readKeyFile(file: string): Buffer {
  const key = parseSecretKey(fs.readFileSync(file, 'utf8'));
  if (!key) throw new Error(`${file} does not hold a 32-byte key (64 hex digits or base64)`);
  return key;
}
