// CPU profile of one measured run, written as a .cpuprofile (open in Chrome DevTools or summarise with
// `npx tsx bench/profile-summary.ts FILE`). Only the run is profiled, not the engines' start-up.
import { mkdir, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { dirname } from 'node:path';

/** Sampling interval; the default 1 ms sees too little of a 1–3 ms request. */
const samplingIntervalMicros = 100;

export async function withCpuProfile<T>(path: string, run: () => Promise<T>): Promise<T> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: samplingIntervalMicros });
    await session.post('Profiler.start');
    const result = await run();
    const { profile } = await session.post('Profiler.stop');
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, JSON.stringify(profile));
    return result;
  } finally {
    session.disconnect();
  }
}
