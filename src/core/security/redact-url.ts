/**
 * A URL as it may be shown in a message or `voiceplane config show`: the whole login (user and
 * password: some providers put the secret in the user name) and every credential-like query
 * parameter (`?password=` is read by the PostgreSQL driver) masked. Text that is not a URL comes
 * back unchanged.
 */
const CREDENTIAL_PARAMETER = /pass|secret|token|key|auth|credential|signature|sig$/i;
export const MASK = '***';

export function redactUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return text;
  }
  let changed = false;
  if (url.username) {
    url.username = MASK;
    changed = true;
  }
  if (url.password) {
    url.password = MASK;
    changed = true;
  }
  for (const name of [...url.searchParams.keys()]) {
    if (CREDENTIAL_PARAMETER.test(name)) {
      url.searchParams.set(name, MASK);
      changed = true;
    }
  }
  return changed ? url.toString() : text;
}
