// Time and identifiers: the core never reads the clock or makes an id itself (docs/architecture.md, "Layers").

export interface Clock {
  /** Wall-clock epoch ms: what is stored (versions' times, TTLs, deadlines). */
  nowMs(): number;
  /** A clock that never steps back, for measuring elapsed time in this process (leases). */
  monotonicMs(): number;
}

export interface IdSource {
  /** A fresh random identifier (UUID v4 in production). */
  newId(): string;
  /** A fresh secret with at least 256 bits of entropy, URL-safe. */
  newSecret(): string;
}
