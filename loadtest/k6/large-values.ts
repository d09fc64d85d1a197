// Values from 1 KiB to 10 MiB: small ones inline in the item, those over 350 KB in S3 behind a pointer,
// those over 4 MiB written through the presigned upload flow and read through a 303 to S3 (docs/api.md,
// "Large values"). Every value read back is checked by size and sha256. `npm run loadtest -- large-values`.
import type { Options } from 'k6/options';
import { blobOf, readBlob, writeBlob } from './lib/blobs.ts';
import { pick, runPrefix } from './lib/keys.ts';
import { baseOptions, load, scenario } from './lib/load.ts';
import { thresholds } from './lib/thresholds.ts';

const KIB = 1024;
const MIB = 1024 * KIB;
/** Sizes and how often each is written: mostly small, as values are, with every storage path covered. */
const sizes = { '1KiB': KIB, '64KiB': 64 * KIB, '512KiB': 512 * KIB, '2MiB': 2 * MIB, '6MiB': 6 * MIB, '10MiB': 10 * MIB } as const;
type SizeLabel = keyof typeof sizes;
const weights: Record<SizeLabel, number> = { '1KiB': 35, '64KiB': 25, '512KiB': 15, '2MiB': 12, '6MiB': 8, '10MiB': 5 };
/** Keys per size: each write overwrites one of them, so the run's storage stays bounded. */
const KEYS_PER_SIZE = 4;

const shape = load({ rate: 2, durationSeconds: 60, vus: 4 });

export const options: Options = {
  ...baseOptions(),
  scenarios: { largeValues: scenario(shape) },
  thresholds: thresholds({ p95Ms: 3000, p99Ms: 8000 }),
};

export function setup(): { prefix: string } {
  return { prefix: runPrefix('large') };
}

export default function ({ prefix }: { prefix: string }): void {
  const label = pick(weights);
  const blob = blobOf(sizes[label]);
  const key = `${prefix}${label}.${Math.floor(Math.random() * KEYS_PER_SIZE)}`;
  const tags = { size: label };
  if (writeBlob(key, blob, { tags: { ...tags, op: 'write' } }).status !== 200) return;
  readBlob(key, blob, { ...tags, op: 'read' });
}
