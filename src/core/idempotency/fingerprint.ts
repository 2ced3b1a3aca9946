/** What makes two requests "the same" for an Idempotency-Key, and which answers are kept for replay. */
import crypto from 'node:crypto';

/** Sorted keys at every depth, so `{a,b}` and `{b,a}` fingerprint the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function fingerprintOf(method: string, path: string, body: unknown): string {
  return crypto
    .createHash('sha256')
    .update(`${method} ${path}\n${canonicalJson(body ?? null)}`)
    .digest('hex');
}

/** Answers stored for replay: the ones produced after the request started executing. */
export function isStorableAnswer(status: number, code: string | undefined): boolean {
  if (status >= 200 && status < 300) return true;
  if (status === 404) return true;
  if (status === 409) return code === 'conflict';
  if (status === 422) return code === 'unprocessable_entity';
  return false;
}
