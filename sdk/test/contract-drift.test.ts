// The SDK restates the server's contract (it is published alone and cannot import schemas/): its
// limits are checked here against schemas/topology.ts and the request schemas, its response readers
// against samples of the response schemas. contract-drift.types.ts compares the types at compile time.

import fc from 'fast-check';
import * as api from '../../schemas/api';
import { BatchGetBody, BatchGetResponse } from '../../schemas/kv-batch';
import { IncrementAck, IncrementBody } from '../../schemas/kv-increment';
import { retryAfterSeconds, statusOf } from '../../schemas/errors';
import { limits, txnLimits, volumeLimits, watchDefaults } from '../../schemas/topology';
import { WatchQuery, WatchResponse } from '../../schemas/watch';
import * as volumes from '../../schemas/volumes';
import {
  DeleteVolumeCommand,
  OfferLostValuesCommand,
  RingstoreClient,
  RingstoreError,
  TrimVolumeCommand,
  WatchCommand,
  WriteVolumeCommand,
  type WatchChange,
} from '../src';
import { readUploadTicket } from '../src/commands/PutCommand';
import * as sdkLimits from '../src/limits';
import type { HttpResponse } from '../src/transport';
import { serverSamples } from './support/zod-arbitrary';

type SdkLimit = keyof typeof sdkLimits;

const txnTimeoutMsMin = api.TxnBody.shape.timeoutMs.unwrap().minValue;

// Every limit the SDK names: the server's value it restates, or why the server has none. Typed by
// the SDK's exports, so a new limit does not compile until it is placed here.
const counterparts: Record<SdkLimit, { server: number | null } | { sdkOnly: string }> = {
  VALUE_BYTES_MAX: { server: limits.valueBytesMax },
  DIRECT_BODY_BYTES_MAX: { server: limits.directBodyBytesMax },
  KEY_BYTES_MAX: { server: limits.keyBytesMax },
  CONTENT_TYPE_CHARS_MAX: { server: limits.contentTypeCharsMax },
  LIST_LIMIT_MAX: { server: limits.listLimitMax },
  BATCH_GET_KEYS_MAX: { server: limits.batchGetKeysMax },
  TXN_OPS_MAX: { server: txnLimits.txnOpsMax },
  TXN_VALUE_BYTES_MAX: { server: txnLimits.txnValueBytesMax },
  // Not in the topology: written into the server's request schema.
  TXN_TIMEOUT_MS_MIN: { server: txnTimeoutMsMin },
  TXN_TIMEOUT_MS_MAX: { server: txnLimits.txnTimeoutMsMax },
  VOLUME_BLOCK_BYTES: { server: volumeLimits.blockBytes },
  VOLUME_IO_BYTES_MAX: { server: volumeLimits.ioBytesMax },
  DEFAULT_MAX_ATTEMPTS: { sdkOnly: "the client's retry policy" },
  MAX_ATTEMPTS_LIMIT: { sdkOnly: "the client's retry policy" },
  RETRY_BASE_DELAY_MS: { sdkOnly: "the client's backoff" },
  RETRY_MAX_DELAY_MS: { sdkOnly: "the client's backoff" },
  RETRY_AFTER_MAX_MS: { sdkOnly: 'how long the client blocks its caller' },
  DEFAULT_REQUEST_TIMEOUT_MS: { sdkOnly: "the client's timeout" },
  LIST_ALL_PAGES_MAX: { sdkOnly: 'how far listAll walks' },
  TXN_CONFLICT_RETRIES_MAX: { sdkOnly: 'how often the client runs a transaction again' },
  // Not in the topology's limits: the change feed's own settings.
  WATCH_WAIT_SECONDS_MAX: { server: watchDefaults.waitSecondsMax },
  WATCH_LIMIT_MAX: { server: watchDefaults.limitMax },
  WATCH_INLINE_VALUE_BYTES_MAX: { server: watchDefaults.inlineValueBytesMax },
  WATCH_REMEMBERED_KEYS_MAX: { sdkOnly: 'how many keys a watch remembers to drop repeats' },
};

const mirrored = Object.entries(counterparts).flatMap(([name, counterpart]) =>
  'server' in counterpart ? [{ name, server: counterpart.server }] : [],
);

describe('SDK limits against the server', () => {
  it('places every limit the SDK exports', () => {
    expect(Object.keys(counterparts).sort()).toEqual(Object.keys(sdkLimits).sort());
  });

  it.each(mirrored)("$name is the server's $server", ({ name, server }) => {
    const sdkValue: unknown = Reflect.get(sdkLimits, name);
    expect(sdkValue).toBe(server);
  });

  it("bounds the values a transaction's gets return as the server does (TXN_VALUE_BYTES_MAX says so)", () => {
    expect(sdkLimits.TXN_VALUE_BYTES_MAX).toBe(txnLimits.txnReadBytesMax);
  });

  it('is enforced by the server exactly: its request schemas accept the bounds and refuse one past them', () => {
    const ops = (count: number) => Array.from({ length: count }, (_, i) => ({ op: 'get' as const, key: `k${i}` }));
    const txn = (body: { ops: Array<{ op: 'get'; key: string }>; timeoutMs?: number }) => api.TxnBody.safeParse(body).success;

    const timeout = (timeoutMs: number) => txn({ ops: ops(1), timeoutMs });

    expect([timeout(sdkLimits.TXN_TIMEOUT_MS_MIN), timeout(sdkLimits.TXN_TIMEOUT_MS_MIN - 1)]).toEqual([true, false]);
    expect([timeout(sdkLimits.TXN_TIMEOUT_MS_MAX), timeout(sdkLimits.TXN_TIMEOUT_MS_MAX + 1)]).toEqual([true, false]);
    expect([txn({ ops: ops(sdkLimits.TXN_OPS_MAX) }), txn({ ops: ops(sdkLimits.TXN_OPS_MAX + 1) })]).toEqual([true, false]);
    const listLimit = (limit: number) => api.ListKeysQuery.safeParse({ limit: String(limit) }).success;
    expect([listLimit(sdkLimits.LIST_LIMIT_MAX), listLimit(sdkLimits.LIST_LIMIT_MAX + 1)]).toEqual([true, false]);
    const by = (value: number) => IncrementBody.safeParse({ by: value }).success;
    expect([Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 1, 1.5].map(by)).toEqual([
      true,
      true,
      false,
      false,
    ]);
    const batch = (count: number) => BatchGetBody.safeParse({ keys: Array.from({ length: count }, (_, i) => `k${i}`) }).success;
    expect([batch(sdkLimits.BATCH_GET_KEYS_MAX), batch(sdkLimits.BATCH_GET_KEYS_MAX + 1)]).toEqual([true, false]);
    const trim = (length: number) => volumes.TrimVolumeBody.safeParse({ offset: 0, length, epoch: 1 }).success;
    expect([trim(sdkLimits.VOLUME_IO_BYTES_MAX), trim(sdkLimits.VOLUME_IO_BYTES_MAX + 1)]).toEqual([true, false]);
    const size = (sizeBytes: number) => volumes.CreateVolumeBody.safeParse({ name: 'disk', sizeBytes }).success;
    // The body takes any integer (the service refuses a size off the block grid); the SDK refuses it earlier.
    expect([size(sdkLimits.VOLUME_BLOCK_BYTES), size(sdkLimits.VOLUME_BLOCK_BYTES + 0.5)]).toEqual([true, false]);
    const volumePage = (limit: number) => api.ListVolumesQuery.safeParse({ limit: String(limit) }).success;
    expect([volumePage(sdkLimits.LIST_LIMIT_MAX), volumePage(sdkLimits.LIST_LIMIT_MAX + 1)]).toEqual([true, false]);
    const watch = (query: Record<string, string>) => WatchQuery.safeParse(query).success;
    const wait = (seconds: number) => watch({ waitSeconds: String(seconds) });
    const watchLimit = (limit: number) => watch({ limit: String(limit) });
    expect([wait(sdkLimits.WATCH_WAIT_SECONDS_MAX), wait(sdkLimits.WATCH_WAIT_SECONDS_MAX + 1)]).toEqual([true, false]);
    expect([watchLimit(sdkLimits.WATCH_LIMIT_MAX), watchLimit(sdkLimits.WATCH_LIMIT_MAX + 1)]).toEqual([true, false]);
    const prefix = (chars: number) => watch({ prefix: 'p'.repeat(chars) });
    expect([prefix(sdkLimits.KEY_BYTES_MAX), prefix(sdkLimits.KEY_BYTES_MAX + 1)]).toEqual([true, false]);
  });

  it("leaves the gateway time to answer and waits out the server's own Retry-After", () => {
    expect(sdkLimits.DEFAULT_REQUEST_TIMEOUT_MS).toBeGreaterThan(limits.apiGatewayTimeoutMs);
    expect(sdkLimits.RETRY_AFTER_MAX_MS).toBeGreaterThanOrEqual(retryAfterSeconds * 1000);
  });
});

/** A client whose every request gets this answer (one attempt: no retry hides a failure). */
function clientAnswering(status: number, body: unknown): RingstoreClient {
  const text = JSON.stringify(body);
  return new RingstoreClient({
    endpoint: 'http://ringstore.test',
    apiKey: 'test-key',
    maxAttempts: 1,
    fetch: async () => new Response(text, { status, headers: { 'content-type': 'application/json' } }),
  });
}

/** What a value is once it has crossed the wire: JSON drops undefined fields and turns -0 into 0. */
function overTheWire(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}

const utf8 = (text: string): number[] => [...new TextEncoder().encode(text)];

describe("the SDK reads every answer the server's response schemas allow", () => {
  it('WriteAck, from put and delete', async () => {
    await fc.assert(
      fc.asyncProperty(serverSamples(api.WriteAck), async (ack) => {
        const client = clientAnswering(200, ack);

        expect(await client.put('k', 'v')).toEqual(overTheWire(ack));
        expect(await client.delete('k')).toEqual(overTheWire(ack));
      }),
    );
  });

  it('IncrementAck, from increment', async () => {
    await fc.assert(
      fc.asyncProperty(serverSamples(IncrementAck), async (ack) => {
        expect(await clientAnswering(200, ack).increment('k', 2)).toEqual(overTheWire(ack));
      }),
    );
  });

  it('ListKeysResponse, from list (an empty cursor marks the last page)', async () => {
    await fc.assert(
      fc.asyncProperty(serverSamples(api.ListKeysResponse), async (page) => {
        const output = await clientAnswering(200, page).list();

        expect(output).toEqual(overTheWire(page.cursor === '' ? { items: page.items } : page));
      }),
    );
  });

  it('TxnCommitted, from transact (values travel base64-encoded)', async () => {
    await fc.assert(
      fc.asyncProperty(serverSamples(api.TxnCommitted), async (committed) => {
        const base64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
        const encodedReads = committed.reads.map((read) => (read.value === undefined ? read : { ...read, value: base64(read.value) }));
        const sent = { ...committed, reads: encodedReads };

        const output = await clientAnswering(200, sent).transact([{ op: 'get', key: 'k' }]);

        expect(output.txid).toBe(committed.txid);
        expect(output.writes).toEqual(overTheWire(committed.writes));
        const reads = output.reads.map((read) =>
          read.found ? { key: read.key, found: true, value: [...read.value], contentType: read.contentType, version: read.version } : read,
        );
        const expected = committed.reads.map(({ key, found, value, contentType, version }) =>
          found
            ? { key, found, value: utf8(value ?? ''), contentType: contentType || 'application/octet-stream', version }
            : { key, found },
        );
        expect(reads).toEqual(overTheWire(expected));
      }),
    );
  });

  it('BatchGetResponse, from batchGet (inline values base64; every found key with its bytes)', async () => {
    await fc.assert(
      fc.asyncProperty(serverSamples(BatchGetResponse), async (sample) => {
        // Prepare: the sample's keys made distinct, and every found value sent inline (no URL to follow here).
        const items = sample.items.map((item, index) => {
          const key = `${index}:${item.key}`;
          if (!item.found) return { key, found: false as const };
          const { url: _url, valueOmitted: _omitted, ...found } = item;
          return { ...found, key, value: Buffer.from(item.value ?? '', 'utf8').toString('base64') };
        });
        fc.pre(items.length > 0 && items.length <= sdkLimits.BATCH_GET_KEYS_MAX);

        const output = await clientAnswering(200, { items }).batchGet(items.map((item) => item.key));

        // Assess: every item read, in order, the values decoded.
        const read = output.items.map((item) =>
          item.found ? { key: item.key, found: true, version: item.version, contentType: item.contentType, value: item.text() } : item,
        );
        const expected = sample.items.map((item, index) =>
          item.found
            ? { key: items[index]!.key, found: true, version: item.version, contentType: item.contentType, value: item.value ?? '' }
            : { key: items[index]!.key, found: false },
        );
        expect(read).toEqual(overTheWire(expected));
      }),
    );
  });

  it('RingResponse, from ring', async () => {
    await fc.assert(
      fc.asyncProperty(serverSamples(api.RingResponse), async (ring) => {
        expect(await clientAnswering(200, ring).ring()).toEqual(overTheWire(ring));
      }),
    );
  });

  it('ApiKeyCreated, from createApiKey (without the description and revocation it echoes)', async () => {
    await fc.assert(
      fc.asyncProperty(serverSamples(api.ApiKeyCreated), async (created) => {
        const { keyId, apiKey, namespace, role, createdAt } = created;

        expect(await clientAnswering(201, created).createApiKey({ namespace: 'team' })).toEqual({
          keyId,
          apiKey,
          namespace,
          role,
          createdAt,
        });
      }),
    );
  });

  it('ApiKeyList and RevokedApiKey, from listApiKeys and revokeApiKey', async () => {
    await fc.assert(
      fc.asyncProperty(serverSamples(api.ApiKeyList), serverSamples(api.RevokedApiKey), async (list, revoked) => {
        expect(await clientAnswering(200, list).listApiKeys()).toEqual(overTheWire(list));
        expect(await clientAnswering(200, revoked).revokeApiKey('3f9c0a1b2c3d')).toEqual(overTheWire(revoked));
      }),
    );
  });

  it('NamespaceSettingsResponse, from getNamespaceSettings and setNamespaceSettings', async () => {
    await fc.assert(
      fc.asyncProperty(serverSamples(api.NamespaceSettingsResponse), async (settings) => {
        const client = clientAnswering(200, settings);

        expect(await client.getNamespaceSettings('team')).toEqual(overTheWire(settings));
        expect(await client.setNamespaceSettings('team', { readConsistency: 'strong' })).toEqual(overTheWire(settings));
      }),
    );
  });

  it('ShardsResponse and MaintenanceReport, from describeShards and repair, whole', async () => {
    await fc.assert(
      fc.asyncProperty(serverSamples(api.ShardsResponse), serverSamples(api.MaintenanceReport), async (shards, report) => {
        expect(await clientAnswering(200, shards).describeShards()).toEqual(overTheWire(shards));
        expect(await clientAnswering(200, report).repair()).toEqual(overTheWire(report));
      }),
    );
  });

  it('FailoverStarted and Failovers, from startFailover and listFailovers, whole', async () => {
    await fc.assert(
      fc.asyncProperty(serverSamples(api.FailoverStarted), serverSamples(api.FailoversResponse), async (started, records) => {
        expect(await clientAnswering(202, started).startFailover({ shard: started.shard })).toEqual(overTheWire(started));
        expect(await clientAnswering(200, records).listFailovers()).toEqual(overTheWire(records));
      }),
    );
  });

  const sampleSync = { status: 'running', nextRange: 0, ranges: 64, keys: 0, startedAtMs: 0, updatedAtMs: 0 };

  it('DrStatus, PromotionStarted, PromotionReport and DrSync, from describeDr, promote, promotionReport and startDrSync, whole', async () => {
    await fc.assert(
      fc.asyncProperty(
        serverSamples(api.DrStatusResponse),
        serverSamples(api.PromotionStarted),
        serverSamples(api.PromotionReportResponse),
        async (status, started, report) => {
          expect(await clientAnswering(200, status).describeDr()).toEqual(overTheWire(status));
          expect(await clientAnswering(202, started).promote({ reason: 'test' })).toEqual(overTheWire(started));
          expect(await clientAnswering(200, report).promotionReport()).toEqual(overTheWire(report));
          expect(await clientAnswering(202, status.sync ?? sampleSync).startDrSync()).toEqual(overTheWire(status.sync ?? sampleSync));
        },
      ),
    );
  });

  it('OfferReport, LostKeys and ReconcileOutcome, from one offer call, lostKeys and reconcile, whole', async () => {
    await fc.assert(
      fc.asyncProperty(
        serverSamples(api.OfferResponse),
        serverSamples(api.LostKeysResponse),
        serverSamples(api.ReconcileResponse),
        async (offer, page, outcome) => {
          const target = { namespace: 'ns', key: 'k', version: 2, action: 'discard' } as const;
          expect(await clientAnswering(200, offer).send(new OfferLostValuesCommand())).toEqual(overTheWire(offer));
          expect(await clientAnswering(200, page).lostKeys()).toEqual(overTheWire(page.cursor === '' ? { entries: page.entries } : page));
          expect(await clientAnswering(200, outcome).reconcile(target)).toEqual(overTheWire(outcome));
        },
      ),
    );
  });

  it('Rebalance, from every rebalance method, whole', async () => {
    await fc.assert(
      fc.asyncProperty(serverSamples(api.RebalanceResponse), async (rebalance) => {
        const started = clientAnswering(202, rebalance);
        const answered = clientAnswering(200, rebalance);

        expect(await started.startRebalance({ add: 1 })).toEqual(overTheWire(rebalance));
        expect(await answered.describeRebalance({ ranges: true })).toEqual(overTheWire(rebalance));
        expect(await started.pauseRebalance('r')).toEqual(overTheWire(rebalance));
        expect(await started.resumeRebalance('r')).toEqual(overTheWire(rebalance));
        expect(await started.cancelRebalance('r')).toEqual(overTheWire(rebalance));
        expect(await answered.setRebalanceRate('r', 10)).toEqual(overTheWire(rebalance));
      }),
    );
  });

  it('Volume, VolumeDescription and VolumeList, from createVolume, describeVolume and listVolumes (an empty cursor ends)', async () => {
    await fc.assert(
      fc.asyncProperty(
        serverSamples(volumes.Volume),
        serverSamples(volumes.VolumeDescription),
        serverSamples(volumes.VolumeList),
        async (volume, description, page) => {
          expect(await clientAnswering(201, volume).createVolume('disk', 4096)).toEqual(overTheWire(volume));
          expect(await clientAnswering(200, description).describeVolume('disk')).toEqual(overTheWire(description));
          expect(await clientAnswering(200, description).volume('disk').describe()).toEqual(overTheWire(description));
          expect(await clientAnswering(200, page).listVolumes()).toEqual(
            overTheWire(page.cursor === '' ? { volumes: page.volumes } : page),
          );
        },
      ),
    );
  });

  it('VolumeSnapshot, VolumeSnapshotList and VolumeSnapshotDeletion, from createSnapshot, snapshots and deleteSnapshot', async () => {
    await fc.assert(
      fc.asyncProperty(
        serverSamples(volumes.VolumeSnapshot),
        serverSamples(volumes.VolumeSnapshotList),
        serverSamples(volumes.VolumeSnapshotDeletion),
        async (snapshot, list, deletion) => {
          expect(await clientAnswering(201, snapshot).volume('disk').createSnapshot('s')).toEqual(overTheWire(snapshot));
          expect(await clientAnswering(200, list).volume('disk').snapshots()).toEqual(overTheWire(list.snapshots));
          expect(await clientAnswering(200, deletion).volume('disk').deleteSnapshot('s')).toEqual(overTheWire(deletion));
        },
      ),
    );
  });

  it('VolumeDeletion, VolumeLease and VolumeWriteAck, from one delete request, attach and renew, write and trim', async () => {
    await fc.assert(
      fc.asyncProperty(
        serverSamples(volumes.VolumeDeletion),
        serverSamples(volumes.VolumeLease),
        serverSamples(volumes.VolumeWriteAck),
        async (deletion, lease, ack) => {
          const step = await clientAnswering(deletion.status === 'deleted' ? 200 : 202, deletion).send(
            new DeleteVolumeCommand({ volume: 'disk' }),
          );
          expect(step).toEqual(overTheWire(deletion));
          const disk = clientAnswering(200, lease).volume('disk');
          expect(await disk.attach({ holder: 'host-a' })).toEqual(overTheWire(lease));
          expect(await disk.renew()).toEqual(overTheWire(lease));
          expect(disk.lease).toEqual(overTheWire(lease));
          const acked = clientAnswering(200, ack);
          const data = new Uint8Array([1, 2, 3]);
          expect(await acked.send(new WriteVolumeCommand({ volume: 'disk', offset: 0, data, epoch: 1 }))).toEqual(overTheWire(ack));
          expect(await acked.send(new TrimVolumeCommand({ volume: 'disk', offset: 0, length: 3, epoch: 1 }))).toEqual(overTheWire(ack));
        },
      ),
    );
  });

  it('WatchResponse, from WatchCommand (values base64, decoded to bytes)', async () => {
    await fc.assert(
      fc.asyncProperty(serverSamples(WatchResponse), async (sample) => {
        // Prepare: each value sent as base64 of its text, as the server sends bytes.
        const base64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
        const sent = {
          ...sample,
          changes: sample.changes.map((change) => (change.value === undefined ? change : { ...change, value: base64(change.value) })),
        };
        const expected = sample.changes.map(({ value, ...change }) => (value === undefined ? change : { ...change, value: utf8(value) }));
        const bytesAsNumbers = (changes: readonly WatchChange[]) =>
          changes.map(({ value, ...change }) => (value === undefined ? change : { ...change, value: [...value] }));

        const page = await clientAnswering(200, sent).send(new WatchCommand({ prefix: 'p/', waitSeconds: 0 }));

        expect({ changes: bytesAsNumbers(page.changes), cursor: page.cursor }).toEqual(
          overTheWire({ changes: expected, cursor: sample.cursor }),
        );
      }),
    );
  });

  it('UploadTicket, from the upload of a large put (less the headers fetch sets itself)', () => {
    const setByFetch = new Set(['content-length', 'host', 'connection', 'transfer-encoding']);
    fc.assert(
      fc.property(serverSamples(api.UploadTicket), (ticket) => {
        const body = new TextEncoder().encode(JSON.stringify(ticket));
        const response: HttpResponse = { status: 201, headers: new Headers(), body, url: 'http://ringstore.test/v1/kv/k/uploads' };
        const headers = Object.fromEntries(Object.entries(ticket.headers).filter(([name]) => !setByFetch.has(name.toLowerCase())));

        expect(readUploadTicket(response)).toEqual(overTheWire({ ...ticket, headers }));
      }),
    );
  });

  it("ErrorResponse, at the code's status: the error keeps the server's code, message and details", async () => {
    await fc.assert(
      fc.asyncProperty(serverSamples(api.ErrorResponse), async ({ error: sent }) => {
        const status = statusOf[sent.code];

        const error: unknown = await clientAnswering(status, { error: sent })
          .ring()
          .catch((caught: unknown) => caught);

        if (!(error instanceof RingstoreError)) throw new Error(`expected a RingstoreError, got ${String(error)}`);
        expect({ code: error.code, message: error.message, status: error.status, details: error.details }).toEqual(
          overTheWire({ code: sent.code, message: sent.message, status, details: sent.details }),
        );
      }),
    );
  });
});
