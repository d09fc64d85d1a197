// Per-namespace settings: the consistency a request gets when it does not name one, how its writes reach a
// DR backup region, and its quotas (request rate, storage).
import { RingstoreError } from './errors';
import { hasStorageBound } from './quotas';
import { validateNamespace } from './validation';
import type {
  Consistency,
  DrMode,
  NamespaceSettings,
  NamespaceSettingsStore,
  NamespaceUsageStore,
  RateLimit,
  StorageQuota,
  StorageUsage,
} from '../ports';

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

/**
 * Keys a namespace may hold when a storage quota is first set on it: they are counted then, one listing
 * page after another, within one admin request. A larger namespace is refused a quota (`quota.unsupported`).
 */
export const usageCountKeysMax = 100_000;

/** A namespace's settings as requests see them: its own, or the deployment's defaults. */
export interface ResolvedNamespaceSettings {
  namespace: string;
  readConsistency: Consistency;
  writeConsistency: Consistency;
  drMode: DrMode;
  rate: RateLimit;
  /** Absent: no storage quota. */
  storage?: StorageQuota;
}

/** A change of settings; `null` returns the rate to the default, or removes the storage quota. */
export interface NamespaceSettingsPatch {
  readConsistency?: Consistency;
  writeConsistency?: Consistency;
  drMode?: DrMode;
  rate?: RateLimit | null;
  storage?: StorageQuota | null;
}

export interface NamespaceUsageDeps {
  counters: NamespaceUsageStore;
  /** Counts what a namespace stores now (its live keys and their sizes), stopping past `keysMax`. */
  count(namespace: string, keysMax: number): Promise<StorageUsage>;
}

export class NamespaceSettingsService {
  constructor(
    private readonly store: NamespaceSettingsStore,
    private readonly rateDefaults: RateLimit,
    /** Needed to set a storage quota (the admin handler); the authorizer only reads settings. */
    private readonly usage?: NamespaceUsageDeps,
  ) {}

  async settingsOf(namespace: string): Promise<ResolvedNamespaceSettings> {
    const { rate, storage, drMode, readConsistency, writeConsistency } = {
      ...defaultConsistency,
      ...(await this.store.settingsOf(namespace)),
    };
    return {
      namespace,
      readConsistency,
      writeConsistency,
      drMode: drMode ?? defaultDrMode,
      rate: rate ?? this.rateDefaults,
      ...(hasStorageBound(storage) ? { storage } : {}),
    };
  }

  /** The settings with the namespace's usage, when it has a storage quota. */
  async describe(namespace: string): Promise<ResolvedNamespaceSettings & { usage?: StorageUsage }> {
    const settings = await this.settingsOf(namespace);
    if (!settings.storage || !this.usage) return settings;
    const usage = await this.usage.counters.usageOf(namespace);
    return { ...settings, usage: usage ?? { keys: 0, bytes: 0 } };
  }

  /**
   * Changes the given settings and keeps the others. A storage quota set on a namespace that has none
   * counts what the namespace stores first (docs/security.md, "Quotas"), and refuses if it already holds
   * more than the quota allows: nothing is changed then.
   */
  async update(namespace: string, patch: NamespaceSettingsPatch): Promise<ResolvedNamespaceSettings & { usage?: StorageUsage }> {
    validateNamespace(namespace);
    const stored = await this.store.settingsOf(namespace);
    const current = await this.settingsOf(namespace);
    const { rate, storage, ...defaults } = patch;
    const nextRate = rate === null ? undefined : (rate ?? stored?.rate);
    const nextStorage = storage === null ? undefined : (storage ?? stored?.storage);
    if (storage !== undefined) await this.prepareUsage(namespace, current.storage, nextStorage ?? undefined);
    await this.store.saveSettings({
      namespace,
      readConsistency: defaults.readConsistency ?? current.readConsistency,
      writeConsistency: defaults.writeConsistency ?? current.writeConsistency,
      drMode: defaults.drMode ?? current.drMode,
      ...(nextRate ? { rate: nextRate } : {}),
      ...(hasStorageBound(nextStorage) ? { storage: nextStorage } : {}),
    });
    return this.describe(namespace);
  }

  /** Starts the usage counter of a namespace that gets its first storage quota, or drops it with the quota. */
  private async prepareUsage(namespace: string, before: StorageQuota | undefined, after: StorageQuota | undefined): Promise<void> {
    if (!this.usage) throw new RingstoreError('internal', 'this handler cannot set storage quotas (no usage counter)');
    if (!hasStorageBound(after)) {
      await this.usage.counters.remove(namespace);
      return;
    }
    const counted = hasStorageBound(before) ? await this.usage.counters.usageOf(namespace) : undefined;
    const usage = counted ?? (await this.usage.count(namespace, usageCountKeysMax));
    if (usage.keys > usageCountKeysMax) {
      throw new RingstoreError(
        'quota.unsupported',
        `namespace ${namespace} holds more than ${usageCountKeysMax} keys: too many to count for a storage quota; nothing was changed`,
        { details: { field: 'storage', keysCountedMax: usageCountKeysMax } },
      );
    }
    const over =
      after.keysMax !== undefined && usage.keys > after.keysMax
        ? `${usage.keys} keys (keysMax ${after.keysMax})`
        : after.bytesMax !== undefined && usage.bytes > after.bytesMax
          ? `${usage.bytes} bytes (bytesMax ${after.bytesMax})`
          : undefined;
    if (over) {
      throw new RingstoreError('request.invalid', `namespace ${namespace} already stores ${over}: nothing was changed`, {
        details: { field: 'storage', usage },
      });
    }
    if (!counted) await this.usage.counters.seed(namespace, usage);
  }
}
