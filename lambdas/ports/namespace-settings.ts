// Per-namespace settings: the defaults a request gets when it names none.
import type { Consistency } from './consistency';
import type { DrMode } from './dr';
import type { RateLimit, StorageQuota } from './quotas';

/** Per-namespace defaults for requests that do not name a consistency. */
export interface NamespaceSettings {
  namespace: string;
  readConsistency: Consistency;
  writeConsistency: Consistency;
  /** How the namespace's writes reach a DR backup region (docs/dr.md); absent: `key-sync`. */
  drMode?: DrMode;
  /** The namespace's own request rate; absent: the deployment's default. */
  rate?: RateLimit;
  /** The namespace's storage quota; absent: none. */
  storage?: StorageQuota;
}

export interface NamespaceSettingsStore {
  settingsOf(namespace: string): Promise<NamespaceSettings | undefined>;
  saveSettings(settings: NamespaceSettings): Promise<void>;
}
