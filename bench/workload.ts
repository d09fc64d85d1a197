// The data every case works on: a fixed set of keys and 1 KiB values, the same for raw and Ringstore.
import { randomBytes } from 'node:crypto';

/** Distinct keys the cases cycle over; every one is written before the measured runs. */
export const keyCount = 500;
/** Size of every value written and read. */
export const valueBytes = 1024;
/** Distinct value contents (random, so nothing on the path can compress or dedupe them). */
const valuePoolSize = 16;

export interface Workload {
  keys: string[];
  values: Buffer[];
  /** The same values, base64, as API Gateway hands a binary body to Lambda. */
  valuesBase64: string[];
  keyOf(i: number): string;
  keyIndexOf(i: number): number;
  valueOf(i: number): Buffer;
  valueBase64Of(i: number): string;
}

/** A stride coprime with `keyCount` visits every key once per `keyCount` calls, not in insertion order. */
const keyStride = 211;

export function makeWorkload(): Workload {
  const keys = Array.from({ length: keyCount }, (_, n) => `bench/key-${String(n).padStart(4, '0')}`);
  const values = Array.from({ length: valuePoolSize }, () => randomBytes(valueBytes));
  const valuesBase64 = values.map((value) => value.toString('base64'));
  const keyIndexOf = (i: number) => (i * keyStride) % keyCount;
  return {
    keys,
    values,
    valuesBase64,
    keyIndexOf,
    keyOf: (i) => keys[keyIndexOf(i)]!,
    valueOf: (i) => values[i % valuePoolSize]!,
    valueBase64Of: (i) => valuesBase64[i % valuePoolSize]!,
  };
}
