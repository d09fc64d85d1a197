// Text the CLI prints: tables for listings and the ring, one-line error descriptions.

import { NotFoundError, RingstoreError, TransactionAbortedError, TransactionOutcomeUnknownError } from '../errors';
import type { FailoverRecord, ListItem, NamespaceSettings, Rebalance, RingCommandOutput } from '../commands';

/** `text` on one line: its line breaks shown as spaces. */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

/**
 * A key as the CLI shows it: as is when printable, JSON-quoted when it has spaces or controls.
 *
 * @example
 * ```ts
 * showKey('a b'); // '"a b"'
 * ```
 */
export function showKey(key: string): string {
  return /^[^\s\u0000-\u001f\u007f"]+$/.test(key) ? key : JSON.stringify(key);
}

/**
 * Whether bytes of this content type read as text: a textual type, or valid UTF-8 without
 * control characters other than tab, CR and LF.
 *
 * @example
 * ```ts
 * isTextual('application/octet-stream', new TextEncoder().encode('hi')); // true
 * ```
 */
export function isTextual(contentType: string, bytes: Uint8Array): boolean {
  if (/^text\/|[/+](json|xml|yaml|javascript)\b|charset=/i.test(contentType)) return true;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return false;
  }
  // Valid UTF-8 without NULs or other C0 controls (tab/CR/LF aside) reads as text.
  return !/[\u0000-\u0008\u000e-\u001f]/.test(new TextDecoder().decode(bytes));
}

/**
 * Describes any error in one line, with the dotted code when there is one.
 *
 * @example
 * ```ts
 * describeError(notFound, 'x'); // 'key "x" not found (kv.notFound)'
 * ```
 */
export function describeError(err: unknown, key?: string): string {
  if (err instanceof TransactionAbortedError) {
    const on = err.key === undefined ? '' : ` on key ${JSON.stringify(err.key)}`;
    const txid = err.txid === undefined ? '' : `; txid ${err.txid}`;
    return `transaction aborted (${err.reason})${on}: nothing was written; ${oneLine(err.message).replace(/^transaction aborted: /, '')} (${err.code}${txid})`;
  }
  if (err instanceof TransactionOutcomeUnknownError) {
    return `transaction outcome unknown: it may have committed; read its keys with --consistency strong before running it again. ${oneLine(err.message)} (${err.code})`;
  }
  if (err instanceof NotFoundError && key !== undefined) return `key ${JSON.stringify(key)} not found (${err.code})`;
  if (err instanceof RingstoreError) {
    let text = `${cliWordingOf(err)} (${err.code})`;
    if (err.retryAfterSeconds !== undefined) text += `; retry after ${err.retryAfterSeconds} s`;
    return text;
  }
  if (err instanceof Error) return oneLine(err.message);
  return oneLine(String(err));
}

/**
 * What the CLI says instead of a server message that names an HTTP route: the command that does it here.
 * Keyed by error code; a code not listed keeps the server's message.
 */
const cliWordings: Readonly<Record<string, string>> = {
  'rebalance.notFound': 'no rebalance has run here: start one with `ringstore rebalance add` (or `ringstore rebalance remove <shard>`)',
};

function cliWordingOf(err: RingstoreError): string {
  return cliWordings[err.code] ?? oneLine(err.message);
}

/**
 * Lays out rows as left-aligned columns separated by two spaces.
 *
 * @example
 * ```ts
 * table([['KEY', 'SIZE'], ['a', '1']]); // 'KEY  SIZE\na    1'
 * ```
 */
export function table(rows: readonly (readonly string[])[], indent = ''): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows
    .map((row) => indent + row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  '))
    .join('\n');
}

/** Widest key the listing table shows; a longer one is cut so that one key does not pad every row. */
export const LIST_KEY_COLUMN_CHARS_MAX = 48;

/**
 * Text cut to `max` characters (graphemes, so an emoji or accented letter is never split), ending
 * in `…` when cut.
 *
 * @example
 * ```ts
 * truncate('users/0123456789', 8); // 'users/0…'
 * ```
 */
export function truncate(text: string, max: number): string {
  const chars = Array.from(new Intl.Segmenter().segment(text), (part) => part.segment);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

/**
 * A listing as a table with a count line; keys wider than `LIST_KEY_COLUMN_CHARS_MAX` are cut,
 * with a note that `--json` shows them whole.
 *
 * @example
 * ```ts
 * formatList([{ key: 'a', version: 1, size: 5, contentType: 'text/plain' }]);
 * ```
 */
export function formatList(items: readonly ListItem[]): string {
  const count = `${items.length} ${items.length === 1 ? 'key' : 'keys'}`;
  if (items.length === 0) return count;
  const rows = [['KEY', 'VERSION', 'SIZE', 'CONTENT-TYPE', 'EXPIRES']];
  let cut = 0;
  for (const item of items) {
    const key = truncate(showKey(item.key), LIST_KEY_COLUMN_CHARS_MAX);
    if (key !== showKey(item.key)) cut += 1;
    rows.push([key, String(item.version), String(item.size), item.contentType, item.expiresAt ?? '-']);
  }
  const note = cut === 0 ? '' : ` (${cut} cut to ${LIST_KEY_COLUMN_CHARS_MAX} characters; --json shows keys whole)`;
  return `${table(rows)}\n${count}${note}`;
}

/**
 * Size of the token range (start, end] on a ring of 2^bits tokens; a range whose start is not
 * below its end wraps around zero.
 *
 * @example
 * ```ts
 * rangeSize(10, 20, 32); // 10
 * rangeSize(4294967290, 5, 32); // 11
 * ```
 */
export function rangeSize(start: number, end: number, bits: number): number {
  const space = 2 ** bits;
  return (((end - start) % space) + space) % space || space;
}

/**
 * The ring as text: header, shards with their share of the token space, ranges with owner and
 * replicas. Warns when the ranges do not cover the token space exactly once.
 *
 * @example
 * ```ts
 * console.log(formatRing(await client.ring()));
 * ```
 */
export function formatRing(ring: RingCommandOutput): string {
  const space = 2 ** ring.tokenBits;
  const owned = new Map<number, { ranges: number; tokens: number }>();
  let covered = 0;
  for (const range of ring.ranges) {
    const size = ring.ranges.length === 1 ? space : rangeSize(range.start, range.end, ring.tokenBits);
    covered += size;
    const entry = owned.get(range.owner) ?? { ranges: 0, tokens: 0 };
    entry.ranges += 1;
    entry.tokens += size;
    owned.set(range.owner, entry);
  }
  const lines = [
    `ring epoch ${ring.epoch}, replication factor ${ring.replicationFactor}, ` +
      `${ring.vnodesPerShard} vnodes per shard, ${ring.tokenBits}-bit tokens`,
    '',
    `shards (${ring.shards.length}):`,
  ];
  const shardRows = [['ID', 'TABLE', 'STATUS', 'RANGES', 'OWNS']];
  for (const shard of ring.shards) {
    const entry = owned.get(shard.id) ?? { ranges: 0, tokens: 0 };
    shardRows.push([String(shard.id), shard.table, shard.status, String(entry.ranges), `${((entry.tokens / space) * 100).toFixed(1)}%`]);
  }
  lines.push(table(shardRows, '  '), '', `ranges (${ring.ranges.length}), each covering tokens in (start, end]:`);
  const rangeRows = [['START', 'END', 'OWNER', 'REPLICAS']];
  for (const range of ring.ranges) {
    rangeRows.push([
      String(range.start),
      String(range.end),
      range.fenced ? `${range.owner} (failing over)` : String(range.owner),
      range.replicas.join(', '),
    ]);
  }
  lines.push(table(rangeRows, '  '));
  if (ring.ranges.length > 0 && covered !== space) {
    lines.push('', `warning: the ranges cover ${covered} tokens, not ${space}`);
  }
  return lines.join('\n');
}

/**
 * Failover records as a table, newest first, with what each one moved and, once its shard rejoined,
 * the writes the new owners never saw.
 *
 * @example
 * ```ts
 * console.log(formatFailovers((await admin.listFailovers()).failovers));
 * ```
 */
/**
 * A namespace's settings, one per line: defaults, request rate, storage quota with its usage.
 *
 * @example
 * ```ts
 * formatNamespace(settings); // 'namespace team\nrate 100/s, burst 200\n...'
 * ```
 */
export function formatNamespace(settings: NamespaceSettings): string {
  const { storage, usage } = settings;
  const bound = (used: number | undefined, max: number | undefined) => `${used ?? '?'} of ${max ?? 'unlimited'}`;
  return [
    `namespace ${settings.namespace}`,
    `consistency: reads ${settings.readConsistency}, writes ${settings.writeConsistency}; DR mode ${settings.drMode}`,
    `rate: ${settings.rate.requestsPerSecond}/s, burst ${settings.rate.burst}`,
    storage ? `storage: keys ${bound(usage?.keys, storage.keysMax)}, bytes ${bound(usage?.bytes, storage.bytesMax)}` : 'storage: no quota',
  ].join('\n');
}

export function formatFailovers(failovers: readonly FailoverRecord[]): string {
  if (failovers.length === 0) return 'no failovers';
  const rows = [['ID', 'SHARD', 'ACTION', 'STATUS', 'REQUESTED', 'RANGES', 'NOTES']];
  for (const failover of failovers) {
    const report = failover.report ?? {};
    const ranges = Array.isArray(report.ranges) ? (report.ranges as Array<{ owner?: unknown }>) : [];
    const owners = [...new Set(ranges.map((range) => String(range.owner)))].join(', ');
    const rejoin = report.rejoin as { divergent?: unknown } | undefined;
    const notes = [
      typeof rejoin?.divergent === 'number' ? `rejoined, ${rejoin.divergent} divergent` : '',
      typeof report.reason === 'string' ? report.reason : '',
    ]
      .filter((note) => note !== '')
      .join('; ');
    rows.push([
      failover.id,
      String(failover.shard),
      failover.action ?? 'failOver',
      failover.status,
      failover.requestedAt,
      ranges.length === 0 ? '-' : `${ranges.length} to ${owners}`,
      notes,
    ]);
  }
  return table(rows);
}

/**
 * Seconds as the CLI shows a duration: `45s`, `3m 10s`, `2h 05m`.
 *
 * @example
 * ```ts
 * formatDuration(190); // '3m 10s'
 * ```
 */
export function formatDuration(seconds: number): string {
  const whole = Math.max(0, Math.round(seconds));
  if (whole < 60) return `${whole}s`;
  if (whole < 3600) return `${Math.floor(whole / 60)}m ${String(whole % 60).padStart(2, '0')}s`;
  return `${Math.floor(whole / 3600)}h ${String(Math.floor((whole % 3600) / 60)).padStart(2, '0')}m`;
}

const count = (value: number): string => value.toLocaleString('en-US');

/**
 * Ranges moved so far: moved and cleaned alike (a cleaned range has moved, and its leftovers are gone).
 *
 * @example
 * ```ts
 * rangesMoved(rebalance); // 3
 * ```
 */
export function rangesMoved(rebalance: Pick<Rebalance, 'ranges'>): number {
  return rebalance.ranges.moved + rebalance.ranges.cleaned;
}

/**
 * What a rebalance changes, in words: `add shards 4, 5`, `remove shard 3`.
 *
 * @example
 * ```ts
 * rebalanceChange({ join: [4], leave: [] }); // 'add shard 4'
 * ```
 */
export function rebalanceChange(change: Rebalance['change']): string {
  const part = (verb: string, ids: readonly number[]) =>
    ids.length === 0 ? [] : [`${verb} shard${ids.length === 1 ? '' : 's'} ${ids.join(', ')}`];
  return [...part('add', change.join), ...part('remove', change.leave)].join(', ');
}

/**
 * A rebalance's progress in one line, as the CLI prints it on each change when its output is no terminal.
 *
 * @example
 * ```ts
 * rebalanceLine(rebalance); // 'running: 3/12 ranges moved, 45,120 keys copied, 1,204 keys/s, 25%, ETA 1m 10s'
 * ```
 */
export function rebalanceLine(rebalance: Rebalance): string {
  const eta = rebalance.etaSeconds === undefined ? '' : `, ETA ${formatDuration(rebalance.etaSeconds)}`;
  const requested = rebalance.requested === undefined ? '' : ` (${rebalance.requested} requested)`;
  return (
    `${rebalance.status}${requested}: ${rangesMoved(rebalance)}/${rebalance.ranges.total} ranges moved, ` +
    `${count(rebalance.keysCopied)} keys copied, ${count(rebalance.keysPerSecond)} keys/s, ${Math.floor(rebalance.progress * 100)}%${eta}`
  );
}

/**
 * How a rebalance stands once it stopped (done, cancelled, paused), with what to do next when there is something.
 *
 * @example
 * ```ts
 * rebalanceOutcome(rebalance); // 'rebalance r-1 done: 12 ranges moved, 45,120 keys copied in 3m 10s'
 * ```
 */
export function rebalanceOutcome(rebalance: Rebalance): string {
  const took =
    rebalance.finishedAt === undefined
      ? ''
      : ` in ${formatDuration((Date.parse(rebalance.finishedAt) - Date.parse(rebalance.startedAt)) / 1000)}`;
  if (rebalance.status === 'done') {
    return `rebalance ${rebalance.id} done: ${rebalance.ranges.total} ranges moved, ${count(rebalance.keysCopied)} keys copied${took}`;
  }
  if (rebalance.status === 'cancelled') {
    const moved =
      rebalance.cancelledFrom === undefined
        ? ''
        : ` (${rebalance.cancelledFrom.moved} of its ${rebalance.cancelledFrom.ranges} ranges had moved and were moved back)`;
    return `rebalance ${rebalance.id} cancelled${took}: the ring is as it began${moved}`;
  }
  if (rebalance.status === 'paused') {
    const why = rebalance.message === undefined ? '' : `: ${rebalance.message}`;
    return `rebalance ${rebalance.id} paused at ${rangesMoved(rebalance)}/${rebalance.ranges.total} ranges${why}; go on with: ringstore rebalance resume`;
  }
  return `rebalance ${rebalance.id}: ${rebalanceLine(rebalance)}`;
}

/**
 * A rebalance's status in a few lines, and every moving range as a table when the answer lists them.
 *
 * @example
 * ```ts
 * console.log(formatRebalance(await admin.describeRebalance({ ranges: true })));
 * ```
 */
export function formatRebalance(rebalance: Rebalance): string {
  const { ranges } = rebalance;
  const lines = [
    `rebalance ${rebalance.id}: ${rebalance.status}${rebalance.requested === undefined ? '' : ` (${rebalance.requested} requested)`}, ${rebalanceChange(rebalance.change)}`,
    `ranges:   ${rangesMoved(rebalance)}/${ranges.total} moved (${ranges.moving} moving, ${ranges.planned} planned, ${ranges.cleaned} cleaned)`,
    `keys:     ${count(rebalance.keysCopied)} copied, ${count(rebalance.keysPerSecond)} keys/s; rate limit ${rebalance.rateKeysPerSecond === 0 ? 'none' : `${count(rebalance.rateKeysPerSecond)} keys/s`}`,
    `progress: ${Math.floor(rebalance.progress * 100)}%${rebalance.etaSeconds === undefined ? '' : `, ETA ${formatDuration(rebalance.etaSeconds)}`}`,
    `started:  ${rebalance.startedAt}${rebalance.finishedAt === undefined ? `; updated ${rebalance.updatedAt}` : `; finished ${rebalance.finishedAt}`}`,
  ];
  if (rebalance.cancelledFrom !== undefined) {
    lines.push(
      `cancelled with ${rebalance.cancelledFrom.moved} of ${rebalance.cancelledFrom.ranges} ranges moved: the ranges above are the moves back`,
    );
  }
  if (rebalance.message !== undefined) lines.push(`message:  ${rebalance.message}`);
  if (rebalance.rangeDetail !== undefined) {
    const rows = [['START', 'END', 'FROM', 'TO', 'STAGE', 'COPIED']];
    for (const range of rebalance.rangeDetail) {
      rows.push([String(range.start), String(range.end), range.from.join(','), range.to.join(','), range.stage, count(range.keysCopied)]);
    }
    lines.push('', table(rows));
  }
  return lines.join('\n');
}
