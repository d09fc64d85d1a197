// A fake Ringstore for each test of a describe block, and the CLI (in an empty home) or a client run against it.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RingstoreClient } from '../../src';
import { FakeRingstore } from './fake-server';
import { type CliResult, runCli } from './run-cli';

export interface CliFixture {
  /** The fake of the test that runs now. */
  fake(): FakeRingstore;
  /** `ringstore <args>` against it, with `apiKey` (default the fake's user key) and `input` on stdin. */
  ringstore(args: string[], options?: { input?: string; apiKey?: string }): Promise<CliResult>;
}

/** Registers the beforeEach/afterEach that start and stop a fake and a home per test. */
export function cliFixture(label: string): CliFixture {
  let fake: FakeRingstore | undefined;
  let home = '';
  beforeEach(async () => {
    fake = await new FakeRingstore().start();
    home = await mkdtemp(join(tmpdir(), `ringstore-${label}-`));
  });
  afterEach(async () => {
    await fake?.close();
    await rm(home, { recursive: true, force: true });
  });
  const current = (): FakeRingstore => {
    if (fake === undefined) throw new Error('the fixture runs inside a test');
    return fake;
  };
  return {
    fake: current,
    ringstore: (args, options = {}) =>
      runCli(home, args, {
        env: { RINGSTORE_ENDPOINT: current().url, RINGSTORE_API_KEY: options.apiKey ?? 'user-key' },
        ...(options.input === undefined ? {} : { input: options.input }),
      }),
  };
}

/** Registers a fake per test and a client of it (one attempt: no retry hides a failure). */
export function clientFixture(): { fake(): FakeRingstore; client(): RingstoreClient } {
  let running: { fake: FakeRingstore; client: RingstoreClient } | undefined;
  beforeEach(async () => {
    const fake = await new FakeRingstore().start();
    running = { fake, client: new RingstoreClient({ endpoint: fake.url, apiKey: 'user-key', maxAttempts: 1 }) };
  });
  afterEach(() => running?.fake.close());
  const current = () => {
    if (running === undefined) throw new Error('the fixture runs inside a test');
    return running;
  };
  return { fake: () => current().fake, client: () => current().client };
}
