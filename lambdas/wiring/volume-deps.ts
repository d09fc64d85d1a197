// Builder of the volumes handler's deps: the volume service over its own transaction runner, the guards every API
// request goes through, and the metrics flushed after each request.
import type { VolumesDeps } from '../handlers/volumes';
import { failoverStats, replicationStats } from './data';
import { drStats } from './dr';
import { requestGuardDeps } from './request-deps';
import { volumeService } from './services';
import type { Wiring } from './wiring';

export function volumesDeps(wiring: Wiring): VolumesDeps {
  return {
    volumes: volumeService(wiring),
    logger: wiring.logger,
    guards: requestGuardDeps(wiring),
    metrics: [replicationStats(wiring), failoverStats(wiring), drStats(wiring)],
  };
}
