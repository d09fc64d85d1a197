// Jest setup (setupFilesAfterEnv of the projects that start processes): after each test file, whatever it
// registered with stopAfterFile is stopped, however its tests ended; a stop that fails or hangs fails the file.
import { stopEverything, takeReports } from './teardown';

afterAll(async () => {
  const problems = await stopEverything();
  for (const block of takeReports()) console.warn(block);
  if (problems.length > 0) throw new Error(`the test file left something that would not stop:\n${problems.join('\n')}`);
}, 120_000);
