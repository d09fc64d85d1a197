import { rmSync } from 'node:fs';
import { stopIntegrationCloud } from '../support/integration-cloud';

export default async function globalTeardown(): Promise<void> {
  const home = process.env.RINGSTORE_IT_HOME;
  if (!home) return;
  await stopIntegrationCloud(home);
  rmSync(home, { recursive: true, force: true });
}
