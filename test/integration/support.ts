// Helpers for integration tests: real HTTP against the local cloud started by global-setup.

export const baseUrl = () => required('RINGSTORE_IT_URL');
export const apiKey = () => required('RINGSTORE_IT_API_KEY');
export const adminKey = () => required('RINGSTORE_IT_ADMIN_KEY');

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: integration tests run through jest's global setup`);
  return value;
}

export interface CallOptions {
  method?: string;
  key?: string | null;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  redirect?: 'follow' | 'manual' | 'error';
}

/** One HTTP call with the given API key (the local user key by default; `key: null` sends none). */
export async function call(path: string, options: CallOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { ...options.headers };
  const key = options.key === undefined ? apiKey() : options.key;
  if (key !== null) headers['x-api-key'] = key;
  return fetch(`${baseUrl()}${path}`, {
    method: options.method ?? 'GET',
    headers,
    ...(options.body === undefined ? {} : { body: options.body }),
    redirect: options.redirect ?? 'manual',
  });
}

export async function errorOf(
  response: Response,
): Promise<{ status: number; code: string; message: string; details?: Record<string, unknown> }> {
  const body = (await response.json()) as { error: { code: string; message: string; details?: Record<string, unknown> } };
  const { code, message, details } = body.error;
  return { status: response.status, code, message, ...(details ? { details } : {}) };
}

let namespaceCounter = 0;

/** A fresh namespace and its user key, so each test file works on keys no other file sees. */
export async function freshNamespace(label: string): Promise<{ namespace: string; key: string; keyId: string }> {
  namespaceCounter += 1;
  const namespace = `${label}-${process.pid}-${namespaceCounter}-${Date.now().toString(36)}`;
  const response = await call('/v1/admin/keys', {
    method: 'POST',
    key: adminKey(),
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ namespace }),
  });
  if (response.status !== 201) throw new Error(`could not create a key: ${response.status} ${await response.text()}`);
  const created = (await response.json()) as { apiKey: string; keyId: string };
  return { namespace, key: created.apiKey, keyId: created.keyId };
}

export const kvPath = (key: string) => `/v1/kv/${encodeURIComponent(key)}`;

export function randomBytes(size: number, seed = 1): Uint8Array {
  const bytes = new Uint8Array(size);
  let state = seed >>> 0 || 1;
  for (let i = 0; i < size; i += 1) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    bytes[i] = state & 0xff;
  }
  return bytes;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
