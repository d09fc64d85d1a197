// Builders of the change feed's parts (docs/watch.md): its table's adapter, the appender the stream consumer runs,
// and the watch service with its handler's deps. Its own module, so that bundles without the feed hold none of it.
import { DynamoFeedStore } from '../adapters/dynamodb-feed-store';
import type { StreamOwnership } from '../core/stream-ownership';
import { FeedWriter, WatchService } from '../core/watch';
import type { WatchDeps } from '../handlers/watch';
import type { FeedStore } from '../ports';
import { documentClient } from './clients';
import { requestGuardDeps } from './request-deps';
import { sleep, type Wiring } from './wiring';

export function feedStore(wiring: Wiring): FeedStore {
  return wiring.port('feedTable', 'read', 'feed', () => new DynamoFeedStore(documentClient(wiring), wiring.config.feedTable));
}

/**
 * One appender per process: its clock stamps every position the process appends, so they only grow. It weighs
 * writes by the caller's StreamOwnership (the replicator's), so the watch handler's bundle holds no ring or shard table.
 */
export function feedWriter(wiring: Wiring, ownership: StreamOwnership): FeedWriter {
  return wiring.shared(
    'feedWriter',
    () => new FeedWriter({ store: feedStore(wiring), clock: wiring.clock, limits: wiring.config.watch, ownership }),
  );
}

export function watchService(wiring: Wiring): WatchService {
  return wiring.perHandler(
    'watch',
    () => new WatchService({ store: feedStore(wiring), clock: wiring.clock, sleep, limits: wiring.config.watch }),
  );
}

export function watchDeps(wiring: Wiring): WatchDeps {
  return { watch: watchService(wiring), guards: requestGuardDeps(wiring), logger: wiring.logger };
}
