// The local EventBridge schedule: invokes a handler every `everyMs`, never two runs at once.
import type { Context, ScheduledEvent } from 'aws-lambda';
import { lambdaContext } from './lambda-events';
import { localRegion } from './engines';

type ScheduledHandler = (event: ScheduledEvent, context: Context) => Promise<unknown>;

export interface RunningSchedule {
  stop(): Promise<void>;
}

export function startSchedule(options: {
  handler: ScheduledHandler;
  name: string;
  everyMs: number;
  log?: (line: string) => void;
}): RunningSchedule {
  if (options.everyMs <= 0) return { stop: async () => undefined };
  let current: Promise<void> = Promise.resolve();
  let stopped = false;
  const tick = () => {
    const event: ScheduledEvent = {
      version: '0',
      id: `local-${Date.now()}`,
      'detail-type': 'Scheduled Event',
      source: 'aws.events',
      account: '000000000000',
      time: new Date().toISOString(),
      region: localRegion,
      resources: [`arn:aws:events:${localRegion}:000000000000:rule/${options.name}`],
      detail: {},
    };
    current = options
      .handler(event, lambdaContext(options.name))
      .then(() => undefined)
      .catch((error: unknown) => options.log?.(`${options.name} failed: ${error instanceof Error ? error.message : String(error)}`))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, options.everyMs);
      });
  };
  let timer = setTimeout(tick, options.everyMs);
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await current;
    },
  };
}
