// Nothing shaped like a secret is written to the audit trail or a log line (docs/security.md, "Audit"): an
// API key anywhere in a string keeps its key id, which names it, and loses its secret, which would let a
// reader of the trail or the logs call the API as its holder.

/** What stands in for a secret that was cut out. */
export const redactedSecret = '[redacted]';

// `rs_<keyId>_<secret>` (auth.ts), also cut short or pasted inside other text: any run of the secret's
// characters after an id, so a key with a truncated or padded secret is redacted too.
const apiKeyShape = /rs_([0-9a-f]{12})_[A-Za-z0-9_-]+/gi;

/**
 * `text` with the secret of every API key in it replaced by {@link redactedSecret}.
 *
 * @example
 * redactSecrets('rotate rs_0123456789ab_s3cr3tS3cr3t'); // 'rotate rs_0123456789ab_[redacted]'
 */
export function redactSecrets(text: string): string {
  return text.replace(apiKeyShape, (_key, keyId: string) => `rs_${keyId}_${redactedSecret}`);
}

/**
 * A copy of `value` with {@link redactSecrets} applied to every string in it, object keys included: for
 * records (an audit entry) written as they are. Only plain data is walked (objects, arrays, strings).
 *
 * @example
 * redactedCopy({ target: { keyId: 'rs_0123456789ab_s3cr3t' } }); // { target: { keyId: 'rs_0123456789ab_[redacted]' } }
 */
export function redactedCopy<T>(value: T): T {
  if (typeof value === 'string') return redactSecrets(value) as T;
  if (Array.isArray(value)) return value.map((element: unknown) => redactedCopy(element)) as T;
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([name, inner]) => [redactSecrets(name), redactedCopy(inner)])) as T;
  }
  return value;
}
