// Replication and tunable consistency through the whole stack: per-request and per-namespace consistency,
// strong writes on every replica, shard status and on-demand repair (admin only).
import { ForbiddenError, RingstoreClient, ValidationError } from '../../sdk/src';
import { adminKey, baseUrl, call, errorOf, freshNamespace, kvPath, sleep } from './support';

let user: RingstoreClient;
let admin: RingstoreClient;
let namespace: string;

beforeAll(async () => {
  const fresh = await freshNamespace('repl');
  namespace = fresh.namespace;
  user = new RingstoreClient({ endpoint: baseUrl(), apiKey: fresh.key });
  admin = new RingstoreClient({ endpoint: baseUrl(), apiKey: adminKey() });
});

/** Polls until `check` holds; integration runs share two cores, so the bound is generous. */
async function eventually(check: () => Promise<boolean>, what: string, boundMs = 20_000): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${boundMs} ms`);
    await sleep(100);
  }
}

describe('per-request consistency', () => {
  it('acknowledges a strong write once the owner and both replicas hold it, and an eventual one after the owner', async () => {
    // Prepare / Act
    const strong = await user.put('strong-key', 'v1', { consistency: 'strong' });
    const eventual = await user.put('eventual-key', 'v1');
    const deleted = await user.delete('strong-key', { consistency: 'strong' });
    // Assess
    expect(strong).toEqual({ key: 'strong-key', version: 1, consistency: 'strong', copies: 3 });
    expect(eventual).toEqual({ key: 'eventual-key', version: 1, consistency: 'eventual' });
    expect(deleted).toEqual({ key: 'strong-key', version: 2, consistency: 'strong', copies: 3 });
  });

  it('rejects an unknown consistency level with a 400 that names the field, and writes nothing', async () => {
    const response = await call(`${kvPath('bad-consistency')}?consistency=linearizable`, { method: 'PUT', body: 'x' });
    expect(await errorOf(response)).toMatchObject({ status: 400, code: 'request.invalid' });
    expect((await call(`${kvPath('bad-consistency')}?consistency=strong`)).status).toBe(404);
  });

  it('replicates eventual writes to every replica: anti-entropy then finds nothing to repair', async () => {
    for (let i = 0; i < 20; i += 1) await user.put(`burst-${i}`, `value-${i}`);
    // The stream delivers the writes to the replicas; a repair pass after that has nothing to copy
    // for these keys (other suites write concurrently, so only this namespace's keys are judged).
    await eventually(async () => {
      const report = await admin.repair();
      return !report.antiEntropy.repairs.some((repair) => repair.namespace === namespace);
    }, 'replicas converging');
    // A full pass: every range of the ring (4 shards x 16 virtual nodes), none skipped (all shards up). A pass
    // the admin call's time budget cut short on a busy machine answers the ranges it left; the next is asked.
    let report = await admin.repair();
    await eventually(async () => {
      if (report.antiEntropy.rangesLeft === 0) return true;
      report = await admin.repair();
      return false;
    }, 'a repair pass within its time budget');
    expect([report.antiEntropy.rangesCompared, report.antiEntropy.rangesSkipped]).toEqual([64, 0]);
    expect(report.antiEntropy.keysCompared).toBeGreaterThanOrEqual(20);
    expect(report.antiEntropy.repairs.filter((repair) => repair.namespace === namespace)).toEqual([]);
  });
});

describe('per-namespace defaults', () => {
  it('applies the namespace default when a request names no level, and the request level when it does', async () => {
    // Prepare: a namespace of its own, with strong writes by default.
    const fresh = await freshNamespace('repl-defaults');
    const client = new RingstoreClient({ endpoint: baseUrl(), apiKey: fresh.key });
    // The request rate is the deployment's default (the quotas' own tests cover it).
    expect(await admin.getNamespaceSettings(fresh.namespace)).toEqual({
      namespace: fresh.namespace,
      readConsistency: 'eventual',
      writeConsistency: 'eventual',
      drMode: 'key-sync',
      rate: expect.any(Object),
    });
    // Act
    const settings = await admin.setNamespaceSettings(fresh.namespace, { writeConsistency: 'strong' });
    // Assess: the authorizer's answer is cached (1 s in these tests), so the default arrives shortly; the
    // answer says so.
    expect(settings).toEqual({
      namespace: fresh.namespace,
      readConsistency: 'eventual',
      writeConsistency: 'strong',
      drMode: 'key-sync',
      rate: expect.any(Object),
      takesEffectWithinSeconds: 1,
    });
    await eventually(async () => (await client.put('probe', 'x')).consistency === 'strong', 'the new default');
    expect((await client.put('explicit', 'x', { consistency: 'eventual' })).consistency).toBe('eventual');
    expect((await client.put('implicit', 'x')).copies).toBe(3);
  });

  it('refuses bad settings with a 400 and non-admin keys with a 403', async () => {
    const bad = await call(`/v1/admin/namespaces/${namespace}`, {
      method: 'PUT',
      key: adminKey(),
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ writeConsistency: 'quorum' }),
    });
    expect(await errorOf(bad)).toMatchObject({ status: 400, code: 'request.invalid' });
    const badName = await call('/v1/admin/namespaces/no%23hash', { key: adminKey() });
    expect(badName.status).toBe(400);
    await expect(user.setNamespaceSettings(namespace, { readConsistency: 'strong' })).rejects.toBeInstanceOf(ForbiddenError);
    await expect(user.describeShards()).rejects.toBeInstanceOf(ForbiddenError);
    await expect(user.repair()).rejects.toBeInstanceOf(ForbiddenError);
    await expect(admin.setNamespaceSettings(namespace, { readConsistency: 'quorum' as never })).rejects.toBeInstanceOf(ValidationError);
  });
});

describe('shard status', () => {
  it('shows every shard available with no hints waiting, and the replication lag observed', async () => {
    await user.put('lag-probe', 'x');
    const status = await admin.describeShards();
    expect(status.shards.map((shard) => [shard.id, shard.health, shard.pendingHints])).toEqual([
      [0, 'available', 0],
      [1, 'available', 0],
      [2, 'available', 0],
      [3, 'available', 0],
    ]);
    expect(status.replication.lagMs.samples).toBeGreaterThanOrEqual(0);
    expect(status.lastMaintenance).toBeDefined();
  });
});
