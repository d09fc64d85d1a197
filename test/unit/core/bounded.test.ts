import { DynamoDBClient, type DynamoDBClientConfig, GetItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { Readable } from 'node:stream';
import { Permits, forEachBounded } from '../../../lambdas/core/bounded';
import { boundRequestsInFlight } from '../../../lambdas/wiring/clients';

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('forEachBounded', () => {
  it('runs every item, never more than the limit at once', async () => {
    let inFlight = 0;
    let peak = 0;
    const seen: number[] = [];
    const all = await forEachBounded(
      Array.from({ length: 20 }, (_, i) => i),
      3,
      async (item) => {
        inFlight += 1;
        peak = Math.max(peak, inFlight);
        await tick();
        seen.push(item);
        inFlight -= 1;
        return 'continue';
      },
    );
    expect(all).toBe(true);
    expect(peak).toBe(3);
    expect([...seen].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it('starts nothing new after a stop, and lets the calls in flight finish', async () => {
    const started: number[] = [];
    const finished: number[] = [];
    const all = await forEachBounded(
      Array.from({ length: 10 }, (_, i) => i),
      2,
      async (item) => {
        started.push(item);
        await tick();
        finished.push(item);
        return item === 0 ? 'stop' : 'continue';
      },
    );
    expect(all).toBe(false);
    expect(started).toEqual([0, 1]);
    expect([...finished].sort()).toEqual([0, 1]);
  });

  it('rethrows the first failure after the calls in flight end', async () => {
    const finished: number[] = [];
    const run = forEachBounded([0, 1, 2, 3], 2, async (item) => {
      await tick();
      if (item === 0) throw new Error('boom');
      finished.push(item);
      return 'continue';
    });
    await expect(run).rejects.toThrow('boom');
    expect(finished).toEqual([1]);
  });

  it('handles no items', async () => {
    await expect(forEachBounded([], 4, async () => 'continue')).resolves.toBe(true);
  });
});

describe('Permits', () => {
  it('lets at most the count hold at once, the others in the order they asked', async () => {
    const permits = new Permits(2);
    const order: number[] = [];
    let holding = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 6 }, async (_, index) => {
        const release = await permits.acquire();
        order.push(index);
        holding += 1;
        peak = Math.max(peak, holding);
        await tick();
        holding -= 1;
        release();
        release(); // a second release changes nothing
      }),
    );
    expect(peak).toBe(2);
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
  });
});

/** A DynamoDB client whose requests `requestHandler` answers, in the process. */
const answeredBy = (requestHandler: DynamoDBClientConfig['requestHandler']) =>
  new DynamoDBClient({
    region: 'us-east-1',
    endpoint: 'http://127.0.0.1:1',
    credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
    requestHandler,
  });

describe('boundRequestsInFlight', () => {
  it("keeps a DynamoDB client's requests in flight at the bound", async () => {
    let inFlight = 0;
    let peak = 0;
    let sent = 0;
    const requestHandler = {
      handle: async () => {
        inFlight += 1;
        sent += 1;
        peak = Math.max(peak, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 5));
        inFlight -= 1;
        const body = Buffer.from(JSON.stringify({ Item: { pk: { S: 'k' } } }));
        return { response: { statusCode: 200, headers: { 'content-type': 'application/x-amz-json-1.0' }, body: Readable.from([body]) } };
      },
    };
    const client = boundRequestsInFlight(answeredBy(requestHandler), 2);

    await Promise.all(Array.from({ length: 10 }, () => client.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'k' } } }))));

    expect(sent).toBe(10);
    expect(peak).toBe(2);
    client.destroy();
  });

  it('keeps its queries at their own, lower bound, and lets other requests past a query waiting for its turn', async () => {
    const inFlight = { all: 0, queries: 0 };
    const peak = { all: 0, queries: 0 };
    const requestHandler = {
      handle: async (request: { headers: Record<string, string> }) => {
        const query = request.headers['x-amz-target']?.endsWith('.Query') ?? false;
        inFlight.all += 1;
        if (query) inFlight.queries += 1;
        peak.all = Math.max(peak.all, inFlight.all);
        peak.queries = Math.max(peak.queries, inFlight.queries);
        await new Promise((resolve) => setTimeout(resolve, 5));
        inFlight.all -= 1;
        if (query) inFlight.queries -= 1;
        const body = Buffer.from(JSON.stringify(query ? { Items: [], Count: 0 } : { Item: { pk: { S: 'k' } } }));
        return { response: { statusCode: 200, headers: { 'content-type': 'application/x-amz-json-1.0' }, body: Readable.from([body]) } };
      },
    };
    const client = boundRequestsInFlight(answeredBy(requestHandler), 3, { queries: 1 });
    const query = () =>
      client.send(
        new QueryCommand({
          TableName: 't',
          IndexName: 'byToken',
          KeyConditionExpression: 'tb = :b',
          ExpressionAttributeValues: { ':b': { N: '1' } },
        }),
      );
    const get = () => client.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'k' } } }));

    await Promise.all([...Array.from({ length: 6 }, query), ...Array.from({ length: 6 }, get)]);

    expect(peak.queries).toBe(1);
    // The gets were not held behind the queue of queries: three requests were in flight at once.
    expect(peak.all).toBe(3);
    client.destroy();
  });
});
