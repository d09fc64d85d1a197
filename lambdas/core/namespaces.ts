// Per-namespace defaults: the consistency a request gets when it does not name one, and how its writes
// reach a DR backup region.
import { validateNamespace } from './validation';
import type { Consistency, DrMode, NamespaceSettings, NamespaceSettingsStore } from '../ports';

/** What a namespace without settings gets: eventual reads and writes (the cheapest; see docs/consistency.md). */
export const defaultConsistency: Readonly<Pick<NamespaceSettings, 'readConsistency' | 'writeConsistency'>> = {
  readConsistency: 'eventual',
  writeConsistency: 'eventual',
};

/**
 * What a namespace without a DR setting gets: `key-sync`, so that the backup region knows of every
 * acknowledged write (docs/dr.md); it costs one cross-region round trip per write in a DR deployment only.
 */
export const defaultDrMode: DrMode = 'key-sync';

export class NamespaceSettingsService {
  constructor(private readonly store: NamespaceSettingsStore) {}

  async settingsOf(namespace: string): Promise<Required<NamespaceSettings>> {
    const stored = await this.store.settingsOf(namespace);
    return { namespace, ...defaultConsistency, drMode: defaultDrMode, ...stored };
  }

  /** Changes the given defaults and keeps the others. */
  async update(
    namespace: string,
    patch: { readConsistency?: Consistency; writeConsistency?: Consistency; drMode?: DrMode },
  ): Promise<Required<NamespaceSettings>> {
    validateNamespace(namespace);
    const settings = { ...(await this.settingsOf(namespace)), ...patch, namespace };
    await this.store.saveSettings(settings);
    return settings;
  }
}
