// The ring record of the control table.
import type { RingState } from './ring-state';

/** The ring record of the control table; every change of it is fenced by its epoch. */
export interface RingStore {
  /** The ring in force, read consistently; undefined before the deployment's bootstrap wrote one. */
  readRing(): Promise<RingState | undefined>;
  /** Stores `initial` unless a ring exists; returns the ring in force either way. */
  ensureRing(initial: RingState): Promise<RingState>;
  /**
   * Replaces the ring in force by `next` (whose epoch is one more) in one conditional write, only if the
   * ring in force is still at `next.epoch - 1`. False when another change won: nothing was written.
   */
  publishRing(next: RingState): Promise<boolean>;
}
