// What a script reads from its environment: where the load goes, with which keys, and how much of it.
// One place, so that every script answers to the same RS_* variables (docs/loadtest.md lists them).

/** A variable's value, or undefined when it is unset or empty. */
export function env(name: string): string | undefined {
  const value = __ENV[name];
  return value === undefined || value === '' ? undefined : value;
}

/** A variable every run needs; a run without it stops at init with a message naming it. */
export function required(name: string): string {
  const value = env(name);
  if (value === undefined) throw new Error(`${name} is not set: see docs/loadtest.md (npm run loadtest sets it for the local cloud)`);
  return value;
}

/** A positive number from the environment, or `fallback`; anything else stops the run at init. */
export function numberEnv(name: string, fallback: number): number {
  const raw = env(name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, not ${raw}`);
  return value;
}

/** A duration in seconds: `90`, `90s`, `2m`, or `fallback` seconds. */
export function secondsEnv(name: string, fallback: number): number {
  const raw = env(name);
  if (raw === undefined) return fallback;
  const match = /^(\d+(?:\.\d+)?)(s|m)?$/.exec(raw);
  if (!match) throw new Error(`${name} must be a duration such as 90s or 2m, not ${raw}`);
  return Number(match[1]) * (match[2] === 'm' ? 60 : 1);
}

/** The deployment under load: its base URL (no trailing slash) and keys. */
export const target = {
  url: required('RS_URL').replace(/\/+$/, ''),
  key: required('RS_KEY'),
  /** Only the smoke script calls admin routes, and only when this is set. */
  adminKey: env('RS_ADMIN_KEY'),
};
