import { rmSync } from 'node:fs';
import type { LocalCloudProcess } from '../support/local-cloud-process';

export default async function globalTeardown(): Promise<void> {
  const cloud = (globalThis as { ringstoreCloud?: LocalCloudProcess }).ringstoreCloud;
  await cloud?.stop();
  if (process.env.RINGSTORE_IT_HOME) rmSync(process.env.RINGSTORE_IT_HOME, { recursive: true, force: true });
}
