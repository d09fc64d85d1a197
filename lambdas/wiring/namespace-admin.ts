// The namespace settings service of the admin API: setting a storage quota counts what the namespace
// stores first, through the KV service's listing and its volumes' sizes, which the authorizer's settings
// service never needs.
import { NamespaceSettingsService } from '../core/namespaces';
import { countStorage } from '../core/quotas';
import { namespaceSettingsStore } from './control';
import { namespaceUsageStore } from './quotas';
import { kvService, volumeService } from './services';
import type { Wiring } from './wiring';

/** Namespace settings for the admin API: a storage quota set on a namespace counts what it stores first. */
export function namespaceAdmin(wiring: Wiring): NamespaceSettingsService {
  return wiring.perHandler('namespaceAdmin', () => {
    const kv = kvService(wiring);
    const volumes = volumeService(wiring);
    return new NamespaceSettingsService(namespaceSettingsStore(wiring), wiring.config.namespaceRateDefaults, {
      counters: namespaceUsageStore(wiring),
      // A volume counts for its size, written or not (docs/volumes.md, "Quotas").
      count: async (namespace, keysMax) => {
        const stored = await countStorage((input) => kv.list(namespace, input), keysMax);
        return { ...stored, bytes: stored.bytes + (await volumes.provisionedBytes(namespace)) };
      },
    });
  });
}
