// Builders of the deps of the handlers that touch the control table only (the authorizer, the ring's bootstrap):
// this module imports control.ts alone, so their bundles hold no data-path module.
import type { AuthorizerDeps } from '../handlers/authorizer';
import type { BootstrapDeps } from '../handlers/bootstrap';
import { initialRingOf } from '../config';
import { apiKeyService, namespaceSettings, ringStore } from './control';
import type { Wiring } from './wiring';

export function authorizerDeps(wiring: Wiring): AuthorizerDeps {
  return { apiKeys: apiKeyService(wiring), namespaces: namespaceSettings(wiring) };
}

export function bootstrapDeps(wiring: Wiring): BootstrapDeps {
  const { config } = wiring;
  return { rings: ringStore(wiring), stage: config.stage, initialRing: () => initialRingOf(config), logger: wiring.logger };
}
