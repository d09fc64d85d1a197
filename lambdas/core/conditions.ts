// Conditional writes: the versions a client's If-Match / If-None-Match name become the one precondition
// the owner shard checks atomically with the write; a failed check is answered as RFC 9110 §13.2.2 orders.
import { PreconditionFailedError, RingstoreError } from './errors';
import { isLive } from './item';
import { type StoredItem, type WritePrecondition } from '../ports';

/**
 * The conditions of a write as the versions their entity tags name. Tags that name no version (weak
 * ones under If-Match, tags this API never issued) can never match and are not listed.
 */
export interface Conditions {
  /** `*`: the key must be live. A list: live at one of these versions; an empty list can never hold. */
  ifMatch?: '*' | readonly number[];
  /** `*`: the key must not be live. A list: not live at any of these versions; an empty list always holds. */
  ifNoneMatch?: '*' | readonly number[];
}

export type WriteKind = 'put' | 'delete';

export type WritePlan =
  | { kind: 'write'; precondition: WritePrecondition }
  /** No state of the key satisfies the conditions: 412 whatever it holds, and nothing to write. */
  | { kind: 'refuse'; error: PreconditionFailedError }
  /**
   * A delete under If-None-Match: * deletes nothing either way, but which failure it is depends on the
   * key: live, the condition fails (412); absent, the condition holds and there is nothing to delete (404).
   */
  | { kind: 'refuseByKeyState' };

type Field = 'if-match' | 'if-none-match';

/**
 * The precondition of a write. If-Match is evaluated before If-None-Match; both must hold. A delete
 * also needs a live key, but its absence is a 404, not a 412, when the conditions themselves hold.
 */
export function planWrite(key: string, conditions: Conditions, kind: WriteKind, tagsMax: number): WritePlan {
  const ifMatch = checkedVersions(conditions.ifMatch, 'if-match', tagsMax);
  const ifNoneMatch = checkedVersions(conditions.ifNoneMatch, 'if-none-match', tagsMax);
  const excluded = ifNoneMatch === '*' || ifNoneMatch === undefined ? [] : ifNoneMatch;
  const write = (precondition: WritePrecondition): WritePlan => ({ kind: 'write', precondition });
  const refuse = (message: string, field?: Field): WritePlan => ({
    kind: 'refuse',
    error: new PreconditionFailedError(`key ${key} was not written: ${message}`, field ? { field } : undefined),
  });
  if (ifMatch !== undefined) {
    if (ifMatch !== '*' && ifMatch.length === 0) {
      return refuse('If-Match names no version: weak tags never match it, and entity tags of this API are "<version>"', 'if-match');
    }
    if (ifNoneMatch === '*') return refuse('If-Match needs the key to exist and If-None-Match: * needs it not to');
    if (ifMatch === '*') return write(excluded.length === 0 ? { kind: 'live' } : { kind: 'live', exceptVersions: excluded });
    const versions = ifMatch.filter((version) => !excluded.includes(version));
    if (versions.length === 0) return refuse('every version If-Match names is one If-None-Match excludes');
    return write({ kind: 'versionIn', versions });
  }
  if (ifNoneMatch === '*') return kind === 'put' ? write({ kind: 'absent' }) : { kind: 'refuseByKeyState' };
  if (excluded.length > 0) {
    return write(kind === 'put' ? { kind: 'versionNotIn', versions: excluded } : { kind: 'live', exceptVersions: excluded });
  }
  return write(kind === 'put' ? { kind: 'none' } : { kind: 'live' });
}

/** The error a failed write answers with, from the key as the store held it when the check failed. */
export function failureOf(
  key: string,
  conditions: Conditions,
  kind: WriteKind,
  current: StoredItem | undefined,
  nowSeconds: number,
): RingstoreError | undefined {
  // An entity tag exists only for a live item: a tombstone's or an expired item's version matches nothing.
  const version = isLive(current, nowSeconds) ? current.version : undefined;
  const { ifMatch, ifNoneMatch } = conditions;
  if (ifMatch !== undefined && !(version !== undefined && (ifMatch === '*' || ifMatch.includes(version)))) {
    const expected = ifMatch === '*' ? 'If-Match: * needs it to exist' : `If-Match names ${tagList(ifMatch)}`;
    const actual = version === undefined ? `key ${key} does not exist` : `key ${key} is at version ${version}`;
    return new PreconditionFailedError(`${actual}; ${expected}`, { field: 'if-match' });
  }
  if (ifNoneMatch !== undefined && version !== undefined && (ifNoneMatch === '*' || ifNoneMatch.includes(version))) {
    const message =
      ifNoneMatch === '*'
        ? `key ${key} already exists (version ${version})`
        : `key ${key} is at version ${version}, which If-None-Match names`;
    return new PreconditionFailedError(message, { field: 'if-none-match' });
  }
  if (kind === 'delete' && version === undefined) return new RingstoreError('kv.notFound', `key ${key} not found`);
  return undefined;
}

/** What a precondition means; the in-memory store evaluates it with this, the DynamoDB one as a condition expression. */
export function preconditionHolds(precondition: WritePrecondition, item: StoredItem | undefined, nowSeconds: number): boolean {
  const live = isLive(item, nowSeconds);
  switch (precondition.kind) {
    case 'none':
      return true;
    case 'live':
      return live && !(precondition.exceptVersions ?? []).includes(item.version);
    case 'absent':
      return !live;
    case 'versionIn':
      return live && precondition.versions.includes(item.version);
    case 'versionNotIn':
      return !live || !precondition.versions.includes(item.version);
  }
}

/** Versions are positive integers, and each becomes an operand of the store's condition: a bounded list. */
function checkedVersions(versions: Conditions['ifMatch'], field: Field, tagsMax: number): '*' | number[] | undefined {
  if (versions === undefined || versions === '*') return versions;
  const unique = [...new Set(versions)];
  if (unique.length > tagsMax) {
    throw new RingstoreError('request.invalid', `${field} names more than ${tagsMax} versions`, { details: { field, limit: tagsMax } });
  }
  if (!unique.every((version) => Number.isSafeInteger(version) && version >= 1)) {
    throw new RingstoreError('request.invalid', `${field} versions must be positive integers`, { details: { field } });
  }
  return unique;
}

const tagList = (versions: readonly number[]) => versions.map((version) => `"${version}"`).join(', ');
