// Per-namespace defaults: the consistency a request gets when it does not name one.
import { validateNamespace } from './validation';
import type { Consistency, NamespaceSettings, NamespaceSettingsStore } from '../ports';

/** What a namespace without settings gets: eventual reads and writes (the cheapest; see docs/consistency.md). */
export const defaultConsistency: Readonly<Pick<NamespaceSettings, 'readConsistency' | 'writeConsistency'>> = {
  readConsistency: 'eventual',
  writeConsistency: 'eventual',
};

export class NamespaceSettingsService {
  constructor(private readonly store: NamespaceSettingsStore) {}

  async settingsOf(namespace: string): Promise<NamespaceSettings> {
    return (await this.store.settingsOf(namespace)) ?? { namespace, ...defaultConsistency };
  }

  /** Changes the given defaults and keeps the others. */
  async update(namespace: string, patch: { readConsistency?: Consistency; writeConsistency?: Consistency }): Promise<NamespaceSettings> {
    validateNamespace(namespace);
    const settings = { ...(await this.settingsOf(namespace)), ...patch, namespace };
    await this.store.saveSettings(settings);
    return settings;
  }
}
