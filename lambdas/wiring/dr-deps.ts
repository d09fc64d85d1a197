// Builders of the deps of cross-region DR's handlers (docs/dr.md): the primary's shipper, the backup's appliers
// and promotion step. This module imports no KV service, as those handlers built none.
import type { DrKeyApplierDeps } from '../handlers/dr-key-applier';
import type { DrPromotionStepDeps } from '../handlers/dr-promotion-step';
import type { DrShipperDeps } from '../handlers/dr-shipper';
import type { DrValueApplierDeps } from '../handlers/dr-value-applier';
import { streamOwnership } from './data';
import { backupApplier, drShipper, drStats, promotionService } from './dr';
import type { Wiring } from './wiring';

export function drShipperDeps(wiring: Wiring): DrShipperDeps {
  return { shipper: drShipper(wiring), ownership: streamOwnership(wiring), logger: wiring.logger };
}

export function drKeyApplierDeps(wiring: Wiring): DrKeyApplierDeps {
  return { applier: backupApplier(wiring), logger: wiring.logger, metrics: drStats(wiring) };
}

export function drValueApplierDeps(wiring: Wiring): DrValueApplierDeps {
  return { applier: backupApplier(wiring), logger: wiring.logger, metrics: drStats(wiring) };
}

export function drPromotionStepDeps(wiring: Wiring): DrPromotionStepDeps {
  return { promotions: promotionService(wiring), logger: wiring.logger, metrics: drStats(wiring) };
}
