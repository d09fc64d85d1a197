// Where the scheduled jobs resume: maintenance's walk of the ring and the transaction sweeper's deadlines.

/** Where the maintenance job resumes its walk of the ring, and what its last run reported (for the status page). */
export interface MaintenanceState {
  nextRange: number;
  /** When the last anti-entropy slice began (absent: none yet, or saved before it was kept). */
  antiEntropyAtMs?: number;
  lastReport: unknown;
}

export interface MaintenanceStateStore {
  readMaintenanceState(): Promise<MaintenanceState | undefined>;
  saveMaintenanceState(state: MaintenanceState): Promise<void>;
}

/** Where the transaction sweeper resumes: deadlines before this are done. */
export interface SweeperState {
  sweptUntilMs: number;
}

export interface SweeperStateStore {
  readSweeperState(): Promise<SweeperState | undefined>;
  saveSweeperState(state: SweeperState): Promise<void>;
}
