// The disaster suite (docs/dr.md): two local regions linked through Toxiproxy, writers loading the
// primary with values of mixed sizes (inline and blob, overwrites and deletes), the primary's region
// killed at a seeded random moment (the link cut, the engines stopped), the backup promoted, and every
// key ever acknowledged read in the backup. Each must be at its latest acknowledged version, or refused
// as pending (503) or lost (410): never served older. Transactions run beside the plain writes: none
// may be seen in part (one of its writes served while another is lost). A partition that heals loses
// nothing and marks nothing lost. The deliberately broken gate (no pending check) must be caught by the
// same check.
import { createHash } from 'node:crypto';
import type { LocalRegions } from '../../cdk/local/regions';
import { baseSeed, deriveSeed, driveUntil, eventually, removeDrHomes, Rng, sleep, startDrRegions, withSeed } from './support';
import { stopAfterFile } from '../support/teardown';

/** Values: mostly small (inline), some over the inline limit (blobs in S3), a few of megabytes. */
const valueSizes = [200, 2_000, 20_000, 400_000, 1_500_000] as const;
const keysCount = 24;
const writers = 6;
/** Transactions of two or three keys of their own key set, with values up to the transaction limit. */
const txnWriters = 2;
const txnKeysCount = 12;
const txnValueSizes = [200, 2_000, 20_000] as const;
/** The link: 5 ms each way and 4 MB/s, so that large values are in transit when the disaster strikes. */
const link = { latencyMs: 5, bandwidthKBps: 4_000 };
/** Bounds on driving the load to a disaster worth judging (a committed transaction, a value in transit). */
const disasterCutsMax = 6;
const disasterDriveBoundMs = 120_000;
/** After a cut, how long the writes in flight get to be answered (refused: the key message cannot cross). */
const settleAfterCutMs = 1_000;

interface KeyHistory {
  /** The newest acknowledged write: its version and the sha256 of its value (undefined: a delete). */
  latest?: { version: number; sha256: string | undefined };
  /**
   * A delete whose answer was not an acknowledgement, and may have been done anyway: the one reason a key whose
   * latest acknowledged write is a put may be absent. (A put or transaction that was not acknowledged cannot make
   * a key absent: the transactions here only put.)
   */
  uncertainDelete: boolean;
}

interface Verdicts {
  consistent: number;
  detected: number;
  /** Served older than the latest acknowledged write (or absent, or other content): never allowed. */
  stale: string[];
  unexpected: string[];
  /** Transactions seen in part: one write served at its version while another is lost. */
  partial: string[];
  /** Keys refused (503 pending, 410 lost) at exactly their latest acknowledged version: an acknowledged write in transit. */
  refusedAtAcknowledged: string[];
  /** What the backup answered, by key. */
  answers: Map<string, Answer>;
}

/** A committed transaction: each key it wrote, at the version it wrote. */
interface TxnRecord {
  txid: string;
  writes: Array<{ key: string; version: number }>;
}

/** What the backup answered for one key: served at a version, absent, pending, or lost at a version. */
type Answer = { status: 200; version: number } | { status: 404 } | { status: 503 | 410; version: number };

const seed = baseSeed();
afterAll(removeDrHomes);

const startRegions = (options: { faultInjection?: boolean } = {}) => startDrRegions('dr-disaster', { link, ...options });

const sha256Of = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/**
 * Writers that put (mostly) and delete random keys until `stop()`; every answer is recorded.
 */
function startLoad(regions: LocalRegions, rng: Rng) {
  const histories = new Map<string, KeyHistory>();
  let stopped = false;
  let sequence = 0;
  const historyOf = (key: string) => {
    const history = histories.get(key) ?? { uncertainDelete: false };
    histories.set(key, history);
    return history;
  };
  const writer = async () => {
    while (!stopped) {
      const key = `disaster/${String(rng.int(0, keysCount - 1)).padStart(2, '0')}`;
      const remove = rng.chance(0.1);
      const value = remove ? undefined : new Uint8Array(rng.pick(valueSizes)).fill(sequence++ % 251);
      const history = historyOf(key);
      try {
        const response = await fetch(`${regions.primary.url}/v1/kv/${encodeURIComponent(key)}`, {
          method: remove ? 'DELETE' : 'PUT',
          headers: { 'x-api-key': regions.primary.apiKey, ...(value ? { 'content-type': 'application/octet-stream' } : {}) },
          ...(value ? { body: value } : {}),
          signal: AbortSignal.timeout(15_000),
        });
        if (response.status === 200) {
          const { version } = (await response.json()) as { version: number };
          if ((history.latest?.version ?? 0) < version) history.latest = { version, sha256: value ? sha256Of(value) : undefined };
        } else {
          await response.arrayBuffer();
          // 404: a delete of an absent key changes nothing; any other failure may have been stored.
          if (remove && response.status !== 404) history.uncertainDelete = true;
        }
      } catch {
        if (remove) history.uncertainDelete = true;
      }
    }
  };
  const transactions: TxnRecord[] = [];
  const txnWriter = async () => {
    while (!stopped) {
      const keys = new Set<string>();
      const size = rng.int(2, 3);
      while (keys.size < size) keys.add(`disaster/t-${String(rng.int(0, txnKeysCount - 1)).padStart(2, '0')}`);
      const values = new Map([...keys].map((key) => [key, new Uint8Array(rng.pick(txnValueSizes)).fill(sequence++ % 251)]));
      try {
        const response = await fetch(`${regions.primary.url}/v1/txn`, {
          method: 'POST',
          headers: { 'x-api-key': regions.primary.apiKey, 'content-type': 'application/json' },
          body: JSON.stringify({
            ops: [...values].map(([key, value]) => ({ op: 'put', key, value: Buffer.from(value).toString('base64'), encoding: 'base64' })),
          }),
          signal: AbortSignal.timeout(15_000),
        });
        const body = (await response.json().catch(() => ({}))) as { status?: string; txid?: string; writes?: TxnRecord['writes'] };
        if (response.status === 200 && body.status === 'committed' && body.txid && body.writes) {
          transactions.push({ txid: body.txid, writes: body.writes });
          for (const { key, version } of body.writes) {
            const history = historyOf(key);
            if ((history.latest?.version ?? 0) < version) history.latest = { version, sha256: sha256Of(values.get(key)!) };
          }
        }
        // A transaction that was not acknowledged may have committed: its puts are newer than what the history
        // holds, which a backup may serve (never older: the judge's rule), and cannot make a key absent.
      } catch {
        // As above: an unanswered transaction only ever puts.
      }
    }
  };
  const running = Promise.all([...Array.from({ length: writers }, writer), ...Array.from({ length: txnWriters }, txnWriter)]);
  return {
    histories,
    transactions,
    stop: stopAfterFile('the disaster load', async () => {
      stopped = true;
      await running;
    }),
  };
}

/**
 * Reads every key ever acknowledged in the backup and judges each answer; then each acknowledged
 * transaction: none may show one of its writes while another of its writes is lost.
 */
async function judge(
  regions: LocalRegions,
  load: { histories: Map<string, KeyHistory>; transactions: readonly TxnRecord[] },
): Promise<Verdicts> {
  const answers = new Map<string, Answer>();
  const verdicts: Verdicts = { consistent: 0, detected: 0, stale: [], unexpected: [], partial: [], refusedAtAcknowledged: [], answers };
  for (const [key, history] of load.histories) {
    const latest = history.latest;
    if (!latest) continue;
    const response = await fetch(`${regions.backup.url}/v1/kv/${encodeURIComponent(key)}`, {
      headers: { 'x-api-key': regions.primary.apiKey },
      redirect: 'manual',
    });
    const body = new Uint8Array(await response.arrayBuffer());
    const served = Number(JSON.parse(response.headers.get('etag') ?? '0'));
    const refusedVersion = () =>
      (JSON.parse(new TextDecoder().decode(body)) as { error?: { details?: { version?: number } } }).error?.details?.version ?? 0;
    if (response.status === 200) answers.set(key, { status: 200, version: served });
    else if (response.status === 410) answers.set(key, { status: 410, version: refusedVersion() });
    else if (response.status === 503) answers.set(key, { status: 503, version: refusedVersion() });
    else if (response.status === 404) answers.set(key, { status: 404 });
    const answer = answers.get(key);
    if (answer && (answer.status === 410 || answer.status === 503) && answer.version === latest.version) {
      verdicts.refusedAtAcknowledged.push(key);
    }
    if (response.status === 503 || response.status === 410) {
      verdicts.detected += 1;
    } else if (response.status === 404) {
      // Absent is right only if the latest acknowledged write was a delete, or a newer unacknowledged delete may have landed.
      if (latest.sha256 === undefined || history.uncertainDelete) verdicts.consistent += 1;
      else verdicts.stale.push(`${key}: absent, acknowledged at v${latest.version}`);
    } else if (response.status === 200) {
      if (served < latest.version) verdicts.stale.push(`${key}: served v${served}, acknowledged at v${latest.version}`);
      else if (served === latest.version && latest.sha256 !== undefined && sha256Of(body) !== latest.sha256) {
        verdicts.stale.push(`${key}: v${served} with other content`);
      } else verdicts.consistent += 1;
    } else {
      verdicts.unexpected.push(`${key}: ${response.status}`);
    }
  }
  for (const { txid, writes } of load.transactions) {
    const shown = writes.filter(({ key, version }) => {
      const answer = answers.get(key);
      return answer?.status === 200 && answer.version === version;
    });
    const lost = writes.filter(({ key, version }) => {
      const answer = answers.get(key);
      return answer?.status === 410 && answer.version === version;
    });
    if (shown.length > 0 && lost.length > 0) {
      verdicts.partial.push(
        `${txid}: ${shown.map((w) => `${w.key}@${w.version}`).join(', ')} served; ${lost.map((w) => w.key).join(', ')} lost`,
      );
    }
  }
  return verdicts;
}

/**
 * Keys whose latest acknowledged write the backup answers as pending: its key message came, its value did not.
 * Those are what a disaster must find in transit. Only a key pending at exactly its acknowledged version
 * counts: a key pending at a newer version (a write whose key message crossed but whose answer was not an
 * acknowledgement) may hold its acknowledged value already, which even the broken gate serves rightly.
 * Asked after the writes in flight at the cut have been answered.
 */
async function ackedKeysPendingInBackup(regions: LocalRegions, load: ReturnType<typeof startLoad>): Promise<number> {
  await sleep(settleAfterCutMs);
  let pending = 0;
  for (const [key, history] of load.histories) {
    if (!history.latest) continue;
    const response = await fetch(`${regions.backup.url}/v1/kv/${encodeURIComponent(key)}`, {
      headers: { 'x-api-key': regions.primary.apiKey },
      redirect: 'manual',
    });
    const body = (await response.json().catch(() => ({}))) as { error?: { details?: { version?: number } } };
    if (response.status === 503 && body.error?.details?.version === history.latest.version) pending += 1;
  }
  return pending;
}

/**
 * The disaster: the link goes, then the primary's engines, at a seeded moment into the load. What the suite
 * must see is made to happen: a transaction committed before it, and a value in transit when it strikes (the
 * link is cut at a seeded moment; when the backup, once it has applied what crossed, answers no acknowledged
 * write as pending, the link heals and is cut again at a later moment, bounded).
 */
async function disaster(regions: LocalRegions, load: ReturnType<typeof startLoad>, rng: Rng): Promise<void> {
  await eventually(
    'a transaction committed before the disaster',
    async () => load.transactions.length,
    (n) => n > 0,
    {
      boundMs: disasterDriveBoundMs,
    },
  );
  let cut = false;
  await driveUntil(
    'a value in transit when the link is cut',
    async () => cut && (await ackedKeysPendingInBackup(regions, load)) > 0,
    async () => {
      if (cut) await regions.link!.heal();
      await sleep(rng.int(1_500, 4_000));
      await regions.link!.cut();
      cut = true;
      await regions.backup.drCaughtUp();
    },
    {
      stepsMax: disasterCutsMax,
      boundMs: disasterDriveBoundMs,
      explain: async () =>
        `${load.transactions.length} transactions committed, ${await ackedKeysPendingInBackup(regions, load)} acknowledged keys pending in the backup`,
    },
  );
  await regions.primary.engines.stop();
  await load.stop();
  await regions.primary.stop().catch(() => undefined);
}

type PromotionOutcome = { status: string; lost?: { count: number; possiblyNeverAcknowledged?: number } };

async function promote(regions: LocalRegions): Promise<PromotionOutcome> {
  const { url, adminKey } = regions.backup;
  const started = await fetch(`${url}/v1/admin/dr/promote`, {
    method: 'POST',
    headers: { 'x-api-key': adminKey, 'content-type': 'application/json' },
    body: JSON.stringify({ reason: 'disaster suite' }),
  });
  expect(started.status).toBe(202);
  for (let attempt = 0; attempt < 300; attempt += 1) {
    const response = await fetch(`${url}/v1/admin/dr/report`, { headers: { 'x-api-key': adminKey } });
    if (response.status === 200) {
      const report = (await response.json()) as PromotionOutcome;
      if (report.status !== 'running') return report;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('the promotion did not finish within a minute');
}

describe('a disaster in the primary region', () => {
  // One disaster at a seeded moment (the seed comes from the clock unless RINGSTORE_FAULT_SEED replays one),
  // judged twice: through the working gate, then through the deliberately broken one, which must be caught
  // serving older the very writes the working gate refused. (A disaster of its own for the broken gate cost
  // a second pair of regions, load and promotion, about 50 s, and proved nothing more.)
  let regions: LocalRegions;
  let load: ReturnType<typeof startLoad>;
  let report: PromotionOutcome;
  let verdicts: Verdicts;

  beforeAll(async () => {
    await withSeed(seed, async () => {
      // The backup's fault injection serves the broken gate below; nothing is broken until it is asked.
      regions = await startRegions({ faultInjection: true });
      const rng = new Rng(deriveSeed(seed, 'disaster-1'));
      load = startLoad(regions, rng);
      await disaster(regions, load, rng);
      report = await promote(regions);
      verdicts = await judge(regions, load);
    });
  });

  afterAll(async () => {
    await regions?.backup.stop();
    await regions?.link?.stop();
  });

  it('leaves no key served older than its latest acknowledged write', async () => {
    await withSeed(seed, async () => {
      // How often a notice whose write never got a version is refused as lost (docs/dr.md): measured, not bounded.
      const lost = report.lost ?? { count: 0 };
      console.log(
        `dr-disaster: ${lost.count} writes lost, ${lost.possiblyNeverAcknowledged ?? 0} of them notices never numbered ` +
          `(possibly never acknowledged); ${verdicts.consistent} keys consistent, ${verdicts.detected} refused`,
      );
      expect(lost.possiblyNeverAcknowledged ?? 0).toBeLessThanOrEqual(lost.count);
      expect(report.status).toBe('completed');
      expect(verdicts.stale).toEqual([]);
      expect(verdicts.partial).toEqual([]);
      expect(verdicts.unexpected).toEqual([]);
      expect(load.transactions.length).toBeGreaterThan(0);
      expect(verdicts.consistent + verdicts.detected).toBeGreaterThan(0);
    });
  });

  it('is caught when the backup serves without its pending check (the broken gate)', async () => {
    await withSeed(seed, async () => {
      // The acknowledged writes the working gate refused are the ones the broken gate must serve older.
      const refused = verdicts.refusedAtAcknowledged;
      const faults = await fetch(`${regions.backup.url}/_faults`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ broken: ['drServeWithoutPendingCheck'] }),
      });
      expect(faults.status).toBe(200);
      const broken = await judge(regions, load);
      const context = refused.map(
        (key) => `${key}: acknowledged ${JSON.stringify(load.histories.get(key))}, broken gate ${JSON.stringify(broken.answers.get(key))}`,
      );
      expect({ context, refused: refused.length > 0, stale: broken.stale.length > 0 }).toEqual({ context, refused: true, stale: true });
    });
  });
});

describe('a partition that heals', () => {
  it('converges: every acknowledged write reaches the backup, nothing is pending or lost', async () => {
    const runSeed = deriveSeed(seed, 'partition');
    await withSeed(seed, async () => {
      // Prepare
      const regions = await startRegions();
      try {
        const rng = new Rng(runSeed);
        const load = startLoad(regions, rng);
        // Act: a partition in the middle of the load; key-sync writes are refused while it lasts
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        await regions.link!.cut();
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        await regions.link!.heal();
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        await load.stop();
        await regions.drCaughtUp();
        // A notice whose withdrawal the cut lost (its owner write failed) waits for the primary's maintenance,
        // which settles notices once no write of theirs can still land; the load has stopped, so that is now.
        const { noticeSettler } = await import('../../lambdas/wiring/dr');
        await noticeSettler(regions.primary.wiring)?.settleOld({ olderThanMs: 0 });
        await regions.drCaughtUp();
        const verdicts = await judge(regions, load);
        const status = (await (
          await fetch(`${regions.backup.url}/v1/admin/dr/status`, { headers: { 'x-api-key': regions.primary.adminKey } })
        ).json()) as { pending: { count: number; lost: number; oldestKey?: string; oldestAgeMs?: number } };
        // Assess
        expect(verdicts.stale).toEqual([]);
        expect(verdicts.partial).toEqual([]);
        expect(verdicts.detected).toBe(0);
        expect(verdicts.unexpected).toEqual([]);
        // The key left waiting (if any) and what the load saw of it, to tell a lost shipment from a stale entry.
        const waiting = status.pending.oldestKey;
        const seen =
          waiting === undefined
            ? undefined
            : {
                key: waiting,
                history: load.histories.get(waiting) ?? 'never acknowledged',
                backup: await fetch(`${regions.backup.url}/v1/kv/${encodeURIComponent(waiting)}`, {
                  headers: { 'x-api-key': regions.primary.apiKey },
                }).then(async (response) => ({
                  status: response.status,
                  etag: response.headers.get('etag'),
                  body: (await response.arrayBuffer()).byteLength,
                })),
              };
        expect({ pending: status.pending, seen }).toMatchObject({ pending: { count: 0, lost: 0 } });
      } finally {
        await regions.stop();
      }
    });
  });
});
