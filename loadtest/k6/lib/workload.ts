// The key-value workloads that differ only in their mix: a key space loaded in setup, then each
// iteration one read or one write of a key drawn from a distribution (kv-read-heavy, kv-write-heavy,
// kv-strong, and mixed-ycsb's workloads build on it).
import { check } from 'k6';
import type { Options } from 'k6/options';
import { checkStatus, type Consistency, versionOf } from './http.ts';
import { numberEnv } from './env.ts';
import { type KeyChooser, keyAt, keysOf, pick, runPrefix, valueOf, zipfian } from './keys.ts';
import { ackOf, get, preload, put } from './kv.ts';
import { baseOptions, type Load, load, scenario } from './load.ts';
import { type Limits, thresholds } from './thresholds.ts';

/** What setup hands every VU: the run's key prefix. */
export interface KeySpace {
  prefix: string;
  records: number;
  valueBytes: number;
}

/**
 * Loads RS_RECORDS keys (default `records`) of RS_VALUE_BYTES bytes (default `valueBytes`) under a prefix
 * of this run's own; call it from `setup`.
 */
export function loadKeySpace(label: string, defaults: { records: number; valueBytes: number }): KeySpace {
  const records = Math.ceil(numberEnv('RS_RECORDS', defaults.records));
  const valueBytes = Math.ceil(numberEnv('RS_VALUE_BYTES', defaults.valueBytes));
  const prefix = runPrefix(label);
  preload(keysOf(prefix, records), () => valueOf(valueBytes));
  return { prefix, records, valueBytes };
}

// One chooser per VU and key-space size: the zipfian constants take O(n) to compute.
const choosers = new Map<number, KeyChooser>();

/** A key of the space, zipfian (YCSB's default request distribution). */
export function zipfianKey(space: KeySpace): string {
  let chooser = choosers.get(space.records);
  if (!chooser) {
    chooser = zipfian(space.records);
    choosers.set(space.records, chooser);
  }
  return keyAt(space.prefix, chooser.next());
}

/** Reads a loaded key: it must be there (200) with a version. */
export function readKey(key: string, consistency: Consistency | undefined, tags: Record<string, string>): void {
  const response = get(key, { ...(consistency ? { consistency } : {}), tags });
  if (checkStatus(response, `read${consistency === 'strong' ? ' strong' : ''}`, 200)) {
    check(response, { 'read has a version': (r) => versionOf(r) !== undefined });
  }
}

/** Overwrites a key; a strong write must say so. Returns the version written, or undefined. */
export function writeKey(
  space: KeySpace,
  key: string,
  consistency: Consistency | undefined,
  tags: Record<string, string>,
): number | undefined {
  const response = put(key, valueOf(space.valueBytes), { ...(consistency ? { consistency } : {}), contentType: 'text/plain', tags });
  if (!checkStatus(response, `write${consistency === 'strong' ? ' strong' : ''}`, 200)) return undefined;
  const ack = ackOf(response);
  if (consistency === 'strong') {
    // At least the owner and one replica held it at the acknowledgement (docs/api.md, Consistency).
    check(ack, { 'strong write acknowledged strong on 2+ copies': (a) => a?.consistency === 'strong' && (a.copies ?? 0) >= 2 });
  }
  return ack?.version;
}

/**
 * A script that is one mix of eventual reads and writes over zipfian keys: its options, setup and iteration.
 * `kvMix('read-heavy', 95, { rate: 40, durationSeconds: 60, vus: 8 }, { p95Ms: 250, p99Ms: 600 })`.
 */
export function kvMix(
  label: string,
  readPercent: number,
  defaults: Load,
  limits: Limits,
): { options: Options; setup: () => KeySpace; iteration: (space: KeySpace) => void } {
  return {
    options: { ...baseOptions(), scenarios: { [label]: scenario(load(defaults)) }, thresholds: thresholds(limits) },
    setup: () => loadKeySpace(label, { records: 1000, valueBytes: 1000 }),
    iteration: (space) => {
      const key = zipfianKey(space);
      if (pick({ read: readPercent, write: 100 - readPercent }) === 'read') readKey(key, undefined, { op: 'read' });
      else writeKey(space, key, undefined, { op: 'write' });
    },
  };
}
