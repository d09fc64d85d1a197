// Block volume reads and writes of overlapping byte ranges are linearizable (docs/volumes.md, "Crashes"): writers
// and readers at once on 16 KiB that straddle a placement group boundary (two groups, so two-phase commit where
// they lie on two shards) at unaligned offsets; Porcupine (test/linearizability, the ranges model) finds no torn
// write and no read of two instants. Each 1 KiB segment a write covers holds its id in every word, so a read
// tells, per segment, which write it saw.
import { checkRangesLinearizable } from '../linearizability/check';
import type { RangeOperation } from '../linearizability/history';
import { volumeLimits } from '../../schemas/topology';
import { call, freshNamespace } from './support';

const segmentBytes = 1024;
const segments = 16;
/** The 16 KiB checked lie across the first placement group boundary, 8 KiB on each side. */
const groupBytes = volumeLimits.groupBlocks * volumeLimits.blockBytes;
const regionOffset = groupBytes - (segments / 2) * segmentBytes;
const writers = 3;
const readers = 3;
const operationsPerClient = 20;

/** A write's bytes: each segment's 256 words all hold the write's id. */
function segmentsOf(id: number, count: number): Uint8Array {
  const bytes = new Uint8Array(count * segmentBytes);
  const view = new DataView(bytes.buffer);
  for (let offset = 0; offset < bytes.byteLength; offset += 4) view.setUint32(offset, id);
  return bytes;
}

/** Per segment, the id its words hold; -1 for a segment whose words disagree (torn inside a segment). */
function idsOf(bytes: Uint8Array): number[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Array.from({ length: bytes.byteLength / segmentBytes }, (_, segment) => {
    const first = view.getUint32(segment * segmentBytes);
    for (let offset = 4; offset < segmentBytes; offset += 4) if (view.getUint32(segment * segmentBytes + offset) !== first) return -1;
    return first;
  });
}

/**
 * Whether the answer is a transaction aborted whole (`409 txn.conflict`, `details.status: aborted`: the write met
 * another's lock or a block changed under it and landed nothing; the read answered nothing), which a client sends
 * again. Such a call did nothing, so it leaves the history; every other answer stays in it.
 */
let aborted = 0;
async function abortedWhole(response: Response): Promise<boolean> {
  if (response.status !== 409) return false;
  const body = (await response.clone().json()) as { error?: { code?: string; details?: { status?: string } } };
  const whole = body.error?.code === 'txn.conflict' && body.error.details?.status === 'aborted';
  if (whole) aborted += 1;
  return whole;
}

const started = process.hrtime.bigint();
const nowNs = () => Number(process.hrtime.bigint() - started);

describe('block volume byte ranges', () => {
  it('are linearizable under concurrent writers and readers of overlapping unaligned ranges across a group boundary', async () => {
    // Prepare: a volume of two placement groups, attached.
    const { key } = await freshNamespace('volume-lin');
    const json = (body: unknown) => ({ body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    expect((await call('/v1/volumes', { method: 'POST', key, ...json({ name: 'lin', sizeBytes: 2 * groupBytes }) })).status).toBe(201);
    const attached = await call('/v1/volumes/lin/lease', { method: 'POST', key, ...json({ holder: 'lin', leaseSeconds: 300 }) });
    const { epoch } = (await attached.json()) as { epoch: number };
    const operations: RangeOperation[] = [];
    const unexpected: string[] = [];
    let nextId = 1;
    const pick = (client: number, n: number) => {
      // Deterministic spread of ranges: 1 to 8 segments, anywhere in the 16.
      const length = ((client * 7 + n * 3) % 8) + 1;
      const first = (client * 5 + n * 11) % (segments - length + 1);
      return { first, last: first + length - 1 };
    };

    /** One recorded write of segments [first, last] with a new id; the status it was answered (0: none). */
    const writeRange = async (client: number, first: number, last: number): Promise<number> => {
      const id = nextId++;
      const operation: RangeOperation = {
        clientId: client,
        key: 'lin',
        input: { op: 'rangeWrite', first, last, id },
        output: { status: 'unknown' },
        invokeNs: nowNs(),
      };
      operations.push(operation);
      const response = await call(`/v1/volumes/lin/data?offset=${regionOffset + first * segmentBytes}&epoch=${epoch}`, {
        method: 'PUT',
        key,
        body: Buffer.from(segmentsOf(id, last - first + 1)),
        headers: { 'content-type': 'application/octet-stream' },
      }).catch(() => undefined);
      if (response?.status === 200) Object.assign(operation, { output: { status: 'ok' }, returnNs: nowNs() });
      else if (response && (await abortedWhole(response))) operations.splice(operations.indexOf(operation), 1);
      else if (response && response.status < 500) unexpected.push(`write #${id}: ${response.status} ${await response.text()}`);
      await response?.arrayBuffer().catch(() => undefined);
      return response?.status ?? 0;
    };
    // Not vacuous by construction: the whole region is written (and recorded) before the clients start, so every
    // read sees writes.
    expect(await writeRange(writers + readers, 0, segments - 1)).toBe(200);

    // Act: writers and readers at once.
    const writer = async (client: number) => {
      for (let n = 0; n < operationsPerClient; n += 1) {
        const { first, last } = pick(client, n);
        await writeRange(client, first, last);
      }
    };
    const reader = async (client: number) => {
      for (let n = 0; n < operationsPerClient; n += 1) {
        const { first, last } = pick(client, n + 100);
        const operation: RangeOperation = {
          clientId: client,
          key: 'lin',
          input: { op: 'rangeRead', first, last },
          output: { status: 'unknown' },
          invokeNs: nowNs(),
        };
        operations.push(operation);
        const start = regionOffset + first * segmentBytes;
        const response = await call('/v1/volumes/lin/data', {
          key,
          headers: { range: `bytes=${start}-${regionOffset + (last + 1) * segmentBytes - 1}` },
        }).catch(() => undefined);
        if (response?.status === 206) {
          const ids = idsOf(new Uint8Array(await response.arrayBuffer()));
          Object.assign(operation, { output: { status: 'ok', ids }, returnNs: nowNs() });
        } else if (response && (await abortedWhole(response))) operations.splice(operations.indexOf(operation), 1);
        else if (response && response.status < 500)
          unexpected.push(`read [${first}, ${last}]: ${response.status} ${await response.text()}`);
      }
    };
    await Promise.all([
      ...Array.from({ length: writers }, (_, client) => writer(client)),
      ...Array.from({ length: readers }, (_, client) => reader(writers + client)),
    ]);

    // Assess: no client mistake answered, and Porcupine finds a linearization.
    expect(unexpected).toEqual([]);
    const reads = operations.filter((operation) => operation.input.op === 'rangeRead' && operation.output.status === 'ok');
    const sawWrites = reads.filter((operation) => operation.output.status === 'ok' && operation.output.ids!.some((id) => id > 0));
    // Not vacuous: most calls answered, and reads saw writes.
    expect({ answered: operations.filter((operation) => operation.output.status === 'ok').length > operations.length / 2 }).toEqual({
      answered: true,
    });
    expect(sawWrites.length).toBeGreaterThan(0);
    expect(aborted).toBeLessThan(((writers + readers) * operationsPerClient) / 2);
    const result = await checkRangesLinearizable({ operations }, { timeoutSeconds: 60 });
    expect(result).toMatchObject({ linearizable: true, failingKeys: [] });

    // The check catches a torn read: one segment of a read that saw a write, set to an id no write put there.
    const torn = structuredClone(operations);
    const victim = torn.find((operation) => operation.output.status === 'ok' && operation.output.ids?.some((id) => id > 0))!;
    const ids = (victim.output as { ids: number[] }).ids;
    ids[ids.findIndex((id) => id > 0)] = nextId + 1;
    expect(await checkRangesLinearizable({ operations: torn }, { timeoutSeconds: 60 })).toMatchObject({
      linearizable: false,
      failingKeys: ['lin'],
    });
  }, 120_000);
});
