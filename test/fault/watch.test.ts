// The change feed under the ring's changes (docs/watch.md): watchers on several prefixes while writers run eventual and
// strong puts, deletes, puts with a TTL and transactions, and, in turn, a shard fails over and rejoins, a shard is
// added and one removed, and every handler restarts. Every acknowledged write reaches every watcher of a matching
// prefix, a key's versions in order once repeats are dropped (but across a change of the key's owner, which docs/watch.md
// excepts), each version one write (never a write an old owner took
// after its range moved, beside the new owner's own), nothing of another namespace or prefix; a watcher paused
// over the failover resumes from its saved cursor and misses nothing; a cursor past the retention gets its 410.
import { tokenOf } from '../../lambdas/core/ring';
import { boundAtMs, encodeCursor } from '../../lambdas/core/watch';
import { watchDefaults } from '../../schemas/topology';
import {
  baseSeed,
  deriveSeed,
  eventually,
  type FaultCloud,
  localNamespace,
  Rng,
  sleep,
  startFaultCloud,
  withSeed,
  type TxnOpInput,
} from './support';

const seed = baseSeed();
/** Bounds on the ring's changes and on the watchers catching up, on a busy machine. */
const changeBoundMs = 240_000;
const catchUpBoundMs = 90_000;

let cloud: FaultCloud;
let otherKey: string;

beforeAll(async () => {
  // One spare shard table off the ring (shard 4) to add; the ring refresh short, as the rebalance suite's.
  cloud = await startFaultCloud('watch', {
    RINGSTORE_SPARE_SHARDS: '1',
    RINGSTORE_MAINTENANCE_INTERVAL_MS: '0',
    RINGSTORE_AUTO_FAILOVER: '0',
    RINGSTORE_RING_REFRESH_MS: '1000',
    // Five watchers read up to 8 feed partitions each: once a second, also while changes settle one after another
    // (by default up to ten times a second), so that their reads leave the machine to the moves (the delivery lag is
    // the bench's, not this suite's).
    RINGSTORE_WATCH_POLL_MS: '1000',
    RINGSTORE_WATCH_READ_INTERVAL_MIN_MS: '1000',
  });
  // A second namespace writing keys under the same prefixes: none of its changes may reach the first's watchers.
  const created = await admin('POST', '/v1/admin/keys', { namespace: 'watch-other' });
  expect(created.status).toBe(201);
  otherKey = (created.json as { apiKey: string }).apiKey;
}, 300_000);

afterAll(async () => {
  await cloud?.close();
});

async function admin(method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${cloud.url}${path}`, {
    method,
    headers: { 'x-api-key': cloud.adminKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: response.status, json: await response.json() };
}

// ------------------------------------------------------------------------------------------------ the ring's changes

async function failover(body: { shard: number; action?: 'moveBack' }): Promise<string> {
  const started = await admin('POST', '/v1/admin/failovers', { ...body, reason: 'test: the feed across a failover' });
  expect({ body, started }).toMatchObject({ body, started: { status: 202 } });
  const id = (started.json as { id: string }).id;
  const record = await eventually(
    `failover ${id} ended`,
    async () => ((await admin('GET', '/v1/admin/failovers')).json as { failovers: Array<{ id: string; status: string }> }).failovers,
    (records) => records.some((found) => found.id === id && found.status !== 'running'),
    { boundMs: changeBoundMs, pollMs: 200 },
  );
  return record.find((found) => found.id === id)!.status;
}

async function rebalance(body: { add?: number; remove?: number[] }): Promise<string> {
  // Until maintenance has reconciled the shards that held a rejoined shard's ranges, the ring has shards rejoining and a
  // start is refused (409, naming it): asked again, with a repair pass (maintenance on demand) between, until accepted.
  const started = await eventually(
    `the rebalance ${JSON.stringify(body)} accepted`,
    async () => {
      const answer = await admin('POST', '/v1/admin/rebalance', body);
      if (answer.status === 409 && /a failover is in progress|shards rejoining/.test(JSON.stringify(answer.json)))
        await admin('POST', '/v1/admin/repair');
      return answer;
    },
    (answer) => answer.status !== 409 || !/a failover is in progress|shards rejoining/.test(JSON.stringify(answer.json)),
    { boundMs: changeBoundMs, pollMs: 250 },
  );
  expect({ body, status: started.status, answer: started.status === 202 ? 'started' : started.json }).toEqual({
    body,
    status: 202,
    answer: 'started',
  });
  const view = await eventually(
    `the rebalance ${JSON.stringify(body)} ended`,
    async () => (await admin('GET', '/v1/admin/rebalance')).json as { status: string },
    (current) => !['running', 'cancelling'].includes(current.status),
    { boundMs: changeBoundMs, pollMs: 250 },
  );
  return view.status;
}

const tableOf = (shard: number) => cloud.ring.shards[0]!.table.replace(/-shard-\d+$/, `-shard-${shard}`);

// ------------------------------------------------------------------------------------------------ writers

/** What the writers were told was written: `key@version` with the operation, per namespace. */
interface Acknowledged {
  writes: Map<string, 'put' | 'delete'>;
  withTtl: Set<string>;
  txids: Map<string, string>;
}

interface WriteReply {
  status: number;
  version?: number;
}

async function write(apiKey: string, method: 'PUT' | 'DELETE', key: string, query: string, body?: string): Promise<WriteReply> {
  try {
    const response = await fetch(`${cloud.url}/v1/kv/${encodeURIComponent(key)}${query}`, {
      method,
      headers: { 'x-api-key': apiKey, 'content-type': 'text/plain' },
      ...(body === undefined ? {} : { body }),
      signal: AbortSignal.timeout(15_000),
    });
    const answer = (await response.json().catch(() => ({}))) as { version?: number };
    return { status: response.status, ...(answer.version === undefined ? {} : { version: answer.version }) };
  } catch {
    return { status: 0 };
  }
}

/** A writer until `running.stop`: eventual and strong puts, deletes, TTL puts and two-key transactions. */
async function writer(rng: Rng, keys: readonly string[], acknowledged: Acknowledged, running: { stop: boolean }, apiKey: string) {
  while (!running.stop) {
    const key = rng.pick(keys);
    const roll = rng.next();
    if (roll < 0.15 && apiKey === cloud.apiKey) {
      const other = rng.pick(keys.filter((candidate) => candidate !== key));
      const ops: TxnOpInput[] = [
        { op: 'put', key, value: `txn ${rng.int(0, 1e6)}` },
        { op: 'put', key: other, value: `txn ${rng.int(0, 1e6)}` },
      ];
      const reply = await cloud.api.txn(ops);
      if (reply.status === 200) {
        for (const written of reply.writes ?? []) {
          acknowledged.writes.set(`${written.key}@${written.version}`, 'put');
          if (reply.txid) acknowledged.txids.set(`${written.key}@${written.version}`, reply.txid);
        }
      }
    } else {
      const method = roll < 0.3 ? 'DELETE' : 'PUT';
      const ttl = method === 'PUT' && roll < 0.4;
      const strong = rng.chance(0.4);
      const query = `?consistency=${strong ? 'strong' : 'eventual'}${ttl ? '&ttlSeconds=3600' : ''}`;
      const reply = await write(apiKey, method, key, query, method === 'PUT' ? `v ${rng.int(0, 1e6)}` : undefined);
      if (reply.status === 200 && reply.version !== undefined) {
        const id = `${key}@${reply.version}`;
        acknowledged.writes.set(id, method === 'PUT' ? 'put' : 'delete');
        if (ttl) acknowledged.withTtl.add(id);
      }
    }
    await sleep(rng.int(40, 120));
  }
}

// ------------------------------------------------------------------------------------------------ watchers

interface Change {
  key: string;
  version: number;
  operation: string;
  txid?: string;
  expiresAt?: string;
  modifiedAt?: string;
  cursor: string;
}

interface Watcher {
  prefix: string;
  /** Every change as delivered, repeats included, in delivery order. */
  delivered: Change[];
  cursor: string;
  failures: string[];
}

async function watchOnce(prefix: string, cursor: string | undefined, waitSeconds: number): Promise<{ status: number; body: unknown }> {
  const query = new URLSearchParams({ prefix, waitSeconds: String(waitSeconds), limit: '200' });
  if (cursor) query.set('cursor', cursor);
  try {
    const response = await fetch(`${cloud.url}/v1/watch?${query.toString()}`, {
      headers: { 'x-api-key': cloud.apiKey },
      signal: AbortSignal.timeout(30_000),
    });
    return { status: response.status, body: await response.json() };
  } catch (error) {
    return { status: 0, body: String(error) };
  }
}

async function startWatcher(prefix: string): Promise<Watcher> {
  const first = await watchOnce(prefix, undefined, 0);
  expect(first.status).toBe(200);
  return { prefix, delivered: [], cursor: (first.body as { cursor: string }).cursor, failures: [] };
}

/** Follows the feed from the watcher's cursor until `running.stop`; answers that are not 200 are retried (a restart). */
async function follow(watcher: Watcher, running: { stop: boolean }) {
  while (!running.stop) {
    const answer = await watchOnce(watcher.prefix, watcher.cursor, 1);
    if (answer.status !== 200) {
      watcher.failures.push(`${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`);
      await sleep(200);
      continue;
    }
    const page = answer.body as { changes: Change[]; cursor: string };
    watcher.delivered.push(...page.changes);
    watcher.cursor = page.cursor;
  }
}

/**
 * Who owned each key over the run, the ring sampled every 200 ms: docs/watch.md promises a key's versions in order
 * except when the key's owner changes (a failover, a cut-over) while the old owner's stream still holds the key's last
 * writes; the new owner's later versions can then be appended before them.
 */
class OwnerTimeline {
  private readonly samples: Array<{ atMs: number; owners: Map<string, string> }> = [];

  constructor(private readonly keys: readonly string[]) {}

  /** Samples the ring until `running.stop`. */
  async follow(running: { stop: boolean }): Promise<void> {
    while (!running.stop) {
      try {
        const ring = await cloud.api.ring();
        const owners = new Map(
          this.keys.map((key) => {
            const token = tokenOf(localNamespace, key);
            return [key, `${ring.ownerOf(token).id}${ring.isFenced(token) ? ' fenced' : ''}`] as const;
          }),
        );
        this.samples.push({ atMs: Date.now(), owners });
      } catch {
        // A restart: the next sample follows.
      }
      await sleep(200);
    }
  }

  /** Whether `key` was seen with more than one owner (or under a fence) from a second before `fromMs` to a second after `toMs`. */
  ownerChanged(key: string, fromMs: number, toMs: number): boolean {
    const seen = new Set(
      this.samples.filter(({ atMs }) => atMs >= fromMs - 1_000 && atMs <= toMs + 1_000).map(({ owners }) => owners.get(key)),
    );
    return seen.size > 1 || [...seen].some((owner) => owner?.endsWith('fenced'));
  }
}

/**
 * A key's versions in delivery order once repeats are dropped: strictly growing, or each that is not, unless the key's
 * owner changed between the two writes (the documented case, OwnerTimeline).
 */
function outOfOrder(delivered: readonly Change[], timeline: OwnerTimeline): string[] {
  const seen = new Set<string>();
  const newest = new Map<string, Change>();
  const problems: string[] = [];
  for (const change of delivered) {
    const id = `${change.key}@${change.version}`;
    if (seen.has(id)) continue;
    seen.add(id);
    const before = newest.get(change.key);
    if (before && change.version <= before.version) {
      const [fromMs, toMs] = [change, before].map((one) => Date.parse(one.modifiedAt ?? '')).sort((x, y) => x - y);
      const documented = Number.isFinite(fromMs) && Number.isFinite(toMs) && timeline.ownerChanged(change.key, fromMs!, toMs!);
      if (!documented) problems.push(`${id} after v${before.version}`);
      continue;
    }
    newest.set(change.key, change);
  }
  return problems;
}

/**
 * Versions of one key delivered with different contents: a version is one write (repeats are the same write again),
 * so two modified times under one key@version mean the feed published a write that was not in the key's history
 * (one an old owner took after its range moved) beside the owner's own write of that version. Versions do not start
 * again in this suite (outOfOrder would see it), so no key is rewritten at a version it held before.
 */
function conflicting(delivered: readonly Change[]): string[] {
  const modified = new Map<string, Set<string | undefined>>();
  for (const change of delivered) {
    const id = `${change.key}@${change.version}`;
    modified.set(id, (modified.get(id) ?? new Set()).add(change.modifiedAt));
  }
  return [...modified].filter(([, times]) => times.size > 1).map(([id, times]) => `${id}: ${[...times].join(' and ')}`);
}

describe('the change feed while the ring changes', () => {
  it('reaches every watcher with every acknowledged write across a failover, a rejoin, an added and a removed shard, and a restart', async () => {
    await withSeed(seed, async () => {
      const started = Date.now();
      const keys = [
        ...Array.from({ length: 12 }, (_, n) => `a/${n}`),
        ...Array.from({ length: 8 }, (_, n) => `b/x/${n}`),
        'c1',
        'c2',
        'cat',
      ];
      const acknowledged: Acknowledged = { writes: new Map(), withTtl: new Set(), txids: new Map() };
      const otherAcknowledged: Acknowledged = { writes: new Map(), withTtl: new Set(), txids: new Map() };
      // The other namespace's keys sit under the same prefixes, named so that one delivered here is told at once.
      const otherKeys = ['a/other-1', 'a/other-2', 'b/x/other', 'cother', 'other'];

      // Watchers first: every write after this is theirs to see.
      const watchers = await Promise.all(['a/', '', 'c', 'b/x/'].map(startWatcher));
      const paused = await startWatcher('a/');
      const watching = { stop: false };
      const following = watchers.map((watcher) => follow(watcher, watching));
      const owners = new OwnerTimeline(keys);
      const sampling = owners.follow(watching);
      const writing = { stop: false };
      const writers = [
        writer(new Rng(deriveSeed(seed, 'writer-1')), keys, acknowledged, writing, cloud.apiKey),
        writer(new Rng(deriveSeed(seed, 'writer-2')), keys, acknowledged, writing, cloud.apiKey),
        writer(new Rng(deriveSeed(seed, 'other')), otherKeys, otherAcknowledged, writing, otherKey),
      ];
      const phases: string[] = [];
      const phaseTimes: string[] = [];
      let phaseStarted = Date.now();
      const phaseDone = (name: string) => {
        phases.push(name);
        phaseTimes.push(`${name} ${((Date.now() - phaseStarted) / 1000).toFixed(1)} s`);
        console.log(`watch suite: ${phaseTimes.join(', ')}`);
        phaseStarted = Date.now();
      };
      try {
        // Paused over the failover: its cursor saved now, read again after the shard is back.
        const pausedAt = paused.cursor;
        await sleep(1_500);

        // A shard fails over, and rejoins once back: its ranges move to replicas and back.
        const failed = 1;
        await cloud.api.setFaults({ downShards: [tableOf(failed)] });
        expect(await failover({ shard: failed })).toBe('completed');
        phaseDone('failover');
        await sleep(1_500);
        await cloud.api.setFaults({});
        await eventually(
          `shard ${failed} serving again`,
          async () => {
            await admin('POST', '/v1/admin/repair');
            const shards = (await admin('GET', '/v1/admin/shards')).json as { shards: Array<{ id: number; health: string }> };
            return shards.shards.find((shard) => shard.id === failed)?.health;
          },
          (health) => health === 'available',
          { boundMs: changeBoundMs, pollMs: 250 },
        );
        expect(await failover({ shard: failed, action: 'moveBack' })).toBe('completed');
        phaseDone('rejoin');

        // The paused watcher resumes from its saved cursor.
        paused.cursor = pausedAt;
        const resumed = follow(paused, watching);

        // A shard added, then one removed: keys move between shards under the watchers.
        expect(await rebalance({ add: 1 })).toBe('done');
        phaseDone('add');
        expect(await rebalance({ remove: [2] })).toBe('done');
        phaseDone('remove');

        // Every handler restarts (the stream pollers resume from their checkpoints).
        await cloud.restart();
        phaseDone('restart');
        await sleep(2_000);

        writing.stop = true;
        await Promise.all(writers);
        const expected = (prefix: string) => [...acknowledged.writes.keys()].filter((id) => id.startsWith(prefix));
        const missing = (watcher: Watcher) => {
          const seen = new Set(watcher.delivered.map((change) => `${change.key}@${change.version}`));
          return expected(watcher.prefix).filter((id) => !seen.has(id));
        };
        await eventually(
          'every watcher caught up with every acknowledged write',
          async () => [...watchers, paused].map((watcher) => ({ prefix: watcher.prefix, missing: missing(watcher).slice(0, 10) })),
          (states) => states.every((state) => state.missing.length === 0),
          { boundMs: catchUpBoundMs, pollMs: 500 },
        );
        watching.stop = true;
        await Promise.all([...following, resumed, sampling]);

        // Assess
        expect(phases).toEqual(['failover', 'rejoin', 'add', 'remove', 'restart']);
        expect(acknowledged.writes.size).toBeGreaterThan(50);
        expect([...acknowledged.writes.values()]).toEqual(expect.arrayContaining(['put', 'delete']));
        expect(acknowledged.withTtl.size).toBeGreaterThan(0);
        expect(acknowledged.txids.size).toBeGreaterThan(0);
        expect(otherAcknowledged.writes.size).toBeGreaterThan(0);
        const report: string[] = [];
        for (const watcher of [...watchers, paused]) {
          const ids = watcher.delivered.map((change) => `${change.key}@${change.version}`);
          const unexpected = ids.filter((id) => !acknowledged.writes.has(id));
          // A change nobody acknowledged can only be a write whose answer was lost (a restart): never another namespace's.
          const foreign = watcher.delivered.filter((change) => otherKeys.includes(change.key));
          expect({ prefix: watcher.prefix, foreign }).toEqual({ prefix: watcher.prefix, foreign: [] });
          expect({ prefix: watcher.prefix, outside: watcher.delivered.filter((change) => !change.key.startsWith(watcher.prefix)) }).toEqual(
            {
              prefix: watcher.prefix,
              outside: [],
            },
          );
          expect({ prefix: watcher.prefix, outOfOrder: outOfOrder(watcher.delivered, owners) }).toEqual({
            prefix: watcher.prefix,
            outOfOrder: [],
          });
          expect({ prefix: watcher.prefix, conflicting: conflicting(watcher.delivered) }).toEqual({
            prefix: watcher.prefix,
            conflicting: [],
          });
          for (const change of watcher.delivered) {
            const id = `${change.key}@${change.version}`;
            const operation = acknowledged.writes.get(id);
            if (operation) expect({ id, operation: change.operation }).toEqual({ id, operation });
            if (acknowledged.withTtl.has(id)) expect({ id, expiresAt: typeof change.expiresAt }).toEqual({ id, expiresAt: 'string' });
            const txid = acknowledged.txids.get(id);
            if (txid) expect({ id, txid: change.txid }).toEqual({ id, txid });
          }
          report.push(
            `prefix '${watcher.prefix}': ${new Set(ids).size} changes, ${ids.length - new Set(ids).size} repeats, ` +
              `${unexpected.length} unacknowledged, ${watcher.failures.length} failed polls`,
          );
        }
        console.log(
          `watch under the ring's changes (${Math.round((Date.now() - started) / 1000)} s, ${acknowledged.writes.size} writes):\n  ${report.join('\n  ')}`,
        );

        // A cursor past the retention (a cursor's check is no secret: any client can write one) is refused with the
        // oldest cursor still served, which works.
        const expired = encodeCursor(localNamespace, boundAtMs(Date.now() - (watchDefaults.retentionSeconds + 60) * 1000));
        const refused = await watchOnce('', expired, 0);
        expect(refused).toMatchObject({ status: 410, body: { error: { code: 'watch.cursorExpired' } } });
        const oldest = (refused.body as { error: { details: { oldestCursor: string } } }).error.details.oldestCursor;
        expect((await watchOnce('', oldest, 0)).status).toBe(200);
      } finally {
        writing.stop = true;
        watching.stop = true;
        await Promise.allSettled([...writers, ...following, sampling]);
      }
    });
  }, 900_000);
});
