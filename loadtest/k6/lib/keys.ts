// Which key a request touches: uniform or zipfian (YCSB's scrambled zipfian, so that the hot keys are
// spread over the ring instead of sitting next to each other), under a prefix of the run's own.

/** A source of key indexes in `[0, n)`. */
export interface KeyChooser {
  next(): number;
}

/** Every key equally likely. */
export function uniform(n: number): KeyChooser {
  return { next: () => Math.floor(Math.random() * n) };
}

/** YCSB's default skew: the most popular key gets about 10 % of the requests at n = 1000. */
export const ZIPFIAN_THETA = 0.99;

/**
 * Zipfian ranks by Gray et al.'s method ("Quickly generating billion-record synthetic databases", SIGMOD
 * 1994), as YCSB's ZipfianGenerator draws them: rank 0 is the most popular.
 */
export function zipfianRanks(n: number, theta: number = ZIPFIAN_THETA): KeyChooser {
  if (!(n >= 2) || !(theta > 0 && theta < 1)) throw new Error(`zipfian needs n >= 2 and 0 < theta < 1 (n=${n}, theta=${theta})`);
  let zetaN = 0;
  for (let i = 1; i <= n; i += 1) zetaN += 1 / Math.pow(i, theta);
  const zeta2 = 1 + Math.pow(0.5, theta);
  const alpha = 1 / (1 - theta);
  const eta = (1 - Math.pow(2 / n, 1 - theta)) / (1 - zeta2 / zetaN);
  return {
    next: () => {
      const u = Math.random();
      const uz = u * zetaN;
      if (uz < 1) return 0;
      if (uz < zeta2) return 1;
      return Math.min(n - 1, Math.floor(n * Math.pow(eta * u - eta + 1, alpha)));
    },
  };
}

/** FNV-1a of the rank's decimal digits (32 bits), YCSB's way of scattering popular ranks. */
function fnv1a(value: number): number {
  let hash = 0x811c9dc5;
  for (const char of String(value)) {
    hash ^= char.charCodeAt(0);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** Zipfian popularity, with the popular keys scattered over the key space (YCSB's ScrambledZipfianGenerator). */
export function zipfian(n: number, theta: number = ZIPFIAN_THETA): KeyChooser {
  const ranks = zipfianRanks(n, theta);
  return { next: () => fnv1a(ranks.next()) % n };
}

/** A prefix no other run shares (`lt.<label>.<time>.`), so runs against one namespace do not meet. */
export function runPrefix(label: string): string {
  return `lt.${label}.${Date.now().toString(36)}.`;
}

/** The `index`th key under `prefix`, zero-padded as YCSB's `user<n>` keys are ordered. */
export function keyAt(prefix: string, index: number): string {
  return `${prefix}user${String(index).padStart(6, '0')}`;
}

/** All `count` keys under `prefix`, for loading them. */
export function keysOf(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, index) => keyAt(prefix, index));
}

/** One of the operations by weight: `pick({ read: 95, update: 5 })`. */
export function pick<Op extends string>(weights: Record<Op, number>): Op {
  const entries = Object.entries(weights) as [Op, number][];
  const total = entries.reduce((sum, [, weight]) => sum + weight, 0);
  let u = Math.random() * total;
  for (const [op, weight] of entries) {
    u -= weight;
    if (u < 0) return op;
  }
  return entries[entries.length - 1]![0];
}

/** A printable value of exactly `bytes` ASCII bytes, different on every call. */
export function valueOf(bytes: number): string {
  const stamp = `${Date.now().toString(36)}.${Math.random().toString(36).slice(2)}.`;
  return (stamp + 'x'.repeat(Math.max(0, bytes - stamp.length))).slice(0, bytes);
}
