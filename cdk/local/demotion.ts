// A demoted primary's mark in its home (docs/dr.md, "Locally"): once its backup region is promoted, the
// primary's data is behind the promoted region's newer writes. Started alone (`npm start`, no DR role), it
// would take writes again with nothing to say so: the mark makes that start refuse unless it is asked for.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDrStateStore } from '../../lambdas/adapters/dynamodb-dr-state';
import { namesFor } from '../../schemas/topology';
import { localCredentials, localRegion } from './engines';

/** What the mark keeps: the backup's DR state when the primary was found fenced by it. */
export interface Demotion {
  /** The DR epoch of the promotion (or of the fence, while it was still promoting). */
  epoch: number;
  state: 'promoting' | 'promoted';
  /** Where the promoted region's data lives. */
  backupHome: string;
  recordedAt: string;
}

/** The flag of `npm start` that starts a demoted primary's data alone anyway. */
export const acceptDemotedFlag = '--accept-demoted';

const markOf = (home: string) => join(home, 'dr-demoted.json');

/** The mark of `home`, or undefined when its data was never a demoted primary's (or the start was accepted). */
export async function demotionOf(home: string): Promise<Demotion | undefined> {
  const text = await readFile(markOf(home), 'utf8').catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  });
  return text === undefined ? undefined : (JSON.parse(text) as Demotion);
}

/** Forgets the mark: the data is a region of its own from now on. */
export async function forgetDemotion(home: string): Promise<void> {
  await rm(markOf(home), { force: true });
}

/**
 * Marks `primaryHome` demoted when the backup's DR state (read from its control table at `dynamodbEndpoint`)
 * has fenced it: promoting or promoted. Answers the mark written, if any.
 */
export async function recordDemotionIfFenced(input: {
  primaryHome: string;
  backupHome: string;
  dynamodbEndpoint: string;
  stage?: string;
  now?: () => Date;
}): Promise<Demotion | undefined> {
  const client = new DynamoDBClient({ region: localRegion, credentials: { ...localCredentials }, endpoint: input.dynamodbEndpoint });
  try {
    const state = await new DynamoDrStateStore(DynamoDBDocumentClient.from(client), namesFor(input.stage).controlTable).read();
    if (!state || state.state === 'backup') return undefined;
    const demotion: Demotion = {
      epoch: state.epoch,
      state: state.state,
      backupHome: input.backupHome,
      recordedAt: (input.now ?? (() => new Date()))().toISOString(),
    };
    await mkdir(input.primaryHome, { recursive: true });
    await writeFile(markOf(input.primaryHome), `${JSON.stringify(demotion, null, 2)}\n`);
    return demotion;
  } finally {
    client.destroy();
  }
}

/** Why a start of a demoted primary's data alone is refused, and what to do instead. */
export function demotedStartRefusal(home: string, demotion: Demotion): string {
  return [
    `the data in ${home} is a demoted DR primary's: its backup region was ${demotion.state === 'promoted' ? 'promoted' : 'being promoted'} ` +
      `(DR epoch ${demotion.epoch}, data in ${demotion.backupHome}), and the promoted region holds writes this data does not have.`,
    'Started alone it would take writes again beside them, with no way to tell which is newer. Instead:',
    '  npm start -- --regions 2                 # the promoted region serves (the old primary answers 403 dr.demoted to writes);',
    '                                           # reconcile lost keys as docs/dr.md says',
    `  npm start -- ${acceptDemotedFlag}         # make this data a region of its own again, leaving the promoted region's writes out`,
  ].join('\n');
}
