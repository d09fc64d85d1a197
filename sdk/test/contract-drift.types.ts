// Compile-time half of the contract-drift guard: the SDK's wire-level response types must describe
// the same JSON as the server's zod schemas (schemas/api.ts and the modules beside it). Only types here, nothing runs: tsc
// (`npm run typecheck`, through sdk/tsconfig.json, which includes sdk/test) fails on a difference
// and prints both sides. The SDK cannot import schemas/ itself: it is published alone.

import type { z } from 'zod';
import type * as api from '../../schemas/api';
import type * as kvBatch from '../../schemas/kv-batch';
import type * as kvIncrement from '../../schemas/kv-increment';
import type * as volumes from '../../schemas/volumes';
import type * as watch from '../../schemas/watch';
import type { IncrementAckWire } from '../src/commands/IncrementCommand';
import type { BatchGetWire } from '../src/commands/BatchGetCommand';
import type { ApiKeyCreatedWire } from '../src/commands/CreateApiKeyCommand';
import type { AuditPageWire } from '../src/commands/ListAuditEntriesCommand';
import type { ShardsWire } from '../src/commands/DescribeShardsCommand';
import type { FailoverStartedWire, FailoversWire } from '../src/commands/StartFailoverCommand';
import type { NamespaceSettingsWire } from '../src/commands/GetNamespaceSettingsCommand';
import type { ApiKeyListWire } from '../src/commands/ListApiKeysCommand';
import type { ListKeysWire } from '../src/commands/ListCommand';
import type { UploadTicketWire, WriteAckWire } from '../src/commands/PutCommand';
import type { MaintenanceReportWire } from '../src/commands/RepairCommand';
import type { RevokedApiKeyWire } from '../src/commands/RevokeApiKeyCommand';
import type { LostKeysWire, OfferReportWire, ReconcileOutcomeWire } from '../src/commands/ReconcileCommand';
import type { RingWire } from '../src/commands/RingCommand';
import type { Rebalance, RebalanceWire } from '../src/commands/StartRebalanceCommand';
import type { TxnCommittedWire } from '../src/commands/TransactCommand';
import type { WatchWire } from '../src/commands/WatchCommand';
import type {
  VolumeDeletion,
  VolumeDescription,
  VolumeInfo,
  VolumeLease,
  VolumeList,
  VolumeWriteAck,
} from '../src/commands/VolumeCommands';

/** What the server sends for a schema: its zod output type. */
type Server<Schema extends z.ZodType> = z.output<Schema>;

/** The JSON a value of T travels as: an optional property is absent, never `undefined`. */
type Json<T> = T extends readonly (infer Item)[] ? Json<Item>[] : T extends object ? { [K in keyof T]: Json<Exclude<T[K], undefined>> } : T;

/** Whether two types are identical (not only assignable both ways: an optional field on one side only differs). */
type Identical<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

/**
 * The server's type cut down to the fields the SDK declares, at every depth. A field the SDK leaves
 * as an untyped record (`Record<string, unknown>`) takes whatever object the server sends there.
 */
type Project<ServerType, Sdk> = string extends keyof Sdk
  ? ServerType extends Sdk
    ? Sdk
    : ServerType
  : ServerType extends readonly (infer ServerItem)[]
    ? Sdk extends readonly (infer SdkItem)[]
      ? Project<ServerItem, SdkItem>[]
      : ServerType
    : ServerType extends object
      ? { [K in keyof ServerType as K extends keyof Sdk ? K : never]: Project<ServerType[K], Sdk[K & keyof Sdk]> }
      : ServerType;

/** `true`, or both sides side by side for tsc's message. */
type Verdict<Ok extends boolean, Sdk, ServerType> = Ok extends true ? true : { sdk: Sdk; server: ServerType };

/** The SDK reads exactly the JSON the server sends. */
type SameJson<Sdk, ServerType> = Verdict<Identical<Json<Sdk>, Json<ServerType>>, Json<Sdk>, Json<ServerType>>;

/** The SDK reads some of the fields the server sends, each one as the server sends it. */
type PartOfJson<Sdk, ServerType> = Verdict<
  Identical<Json<Sdk>, Project<Json<ServerType>, Json<Sdk>>>,
  Json<Sdk>,
  Project<Json<ServerType>, Json<Sdk>>
>;

/** The SDK accepts everything the server sends there, and more (a deliberate leniency). */
type AcceptsJson<Sdk, ServerType> = Verdict<Json<ServerType> extends Json<Sdk> ? true : false, Json<Sdk>, Json<ServerType>>;

type Holds<Check extends true> = Check;

type SdkHandoff = MaintenanceReportWire['handoff'][number];
type ServerHandoff = Server<typeof api.MaintenanceReport>['handoff'][number];

export type Checks = [
  Holds<SameJson<WriteAckWire, Server<typeof api.WriteAck>>>,
  Holds<SameJson<ListKeysWire, Server<typeof api.ListKeysResponse>>>,
  Holds<SameJson<TxnCommittedWire, Server<typeof api.TxnCommitted>>>,
  Holds<SameJson<BatchGetWire, Server<typeof kvBatch.BatchGetResponse>>>,
  Holds<SameJson<IncrementAckWire, Server<typeof kvIncrement.IncrementAck>>>,
  Holds<SameJson<ApiKeyListWire, Server<typeof api.ApiKeyList>>>,
  Holds<SameJson<RevokedApiKeyWire, Server<typeof api.RevokedApiKey>>>,
  Holds<SameJson<NamespaceSettingsWire, Server<typeof api.NamespaceSettingsResponse>>>,
  Holds<SameJson<AuditPageWire, Server<typeof api.AuditPage>>>,
  // The change feed (schemas/watch.ts): a page whole, values still base64.
  Holds<SameJson<WatchWire, Server<typeof watch.WatchResponse>>>,

  // A new key's answer also carries the description and revocation the admin just sent; the SDK
  // does not return them.
  Holds<PartOfJson<ApiKeyCreatedWire, Server<typeof api.ApiKeyCreated>>>,
  // The repair report is passed on whole; the SDK types the fields an operator reads (not the
  // durations or the next range), leaves each repair as a record, and takes a handoff's transition
  // as any string (two today), so that a new one still reads.
  Holds<PartOfJson<Omit<MaintenanceReportWire, 'handoff'>, Omit<Server<typeof api.MaintenanceReport>, 'handoff'>>>,
  Holds<PartOfJson<Omit<SdkHandoff, 'transition'>, Omit<ServerHandoff, 'transition'>>>,
  Holds<AcceptsJson<MaintenanceReportWire, Server<typeof api.MaintenanceReport>>>,

  // The ring: tokenBits is any number in the SDK (32 today), so a ring with wider tokens reads.
  Holds<SameJson<Omit<RingWire, 'tokenBits'>, Omit<Server<typeof api.RingResponse>, 'tokenBits'>>>,
  Holds<AcceptsJson<RingWire, Server<typeof api.RingResponse>>>,

  // An upload ticket: the SDK also follows a presigned POST and a ticket without an expiry.
  Holds<SameJson<Omit<UploadTicketWire, 'method' | 'expiresAt'>, Omit<Server<typeof api.UploadTicket>, 'method' | 'expiresAt'>>>,
  Holds<AcceptsJson<UploadTicketWire, Server<typeof api.UploadTicket>>>,

  // Shard health: the last maintenance report is an untyped record in the SDK's output.
  Holds<SameJson<Omit<ShardsWire, 'lastMaintenance'>, Omit<Server<typeof api.ShardsResponse>, 'lastMaintenance'>>>,
  Holds<AcceptsJson<ShardsWire, Server<typeof api.ShardsResponse>>>,

  // Failovers: the records are passed on whole, the report as the server wrote it.
  Holds<SameJson<FailoverStartedWire, Server<typeof api.FailoverStarted>>>,
  Holds<SameJson<FailoversWire, Server<typeof api.FailoversResponse>>>,
  Holds<AcceptsJson<FailoversWire, Server<typeof api.FailoversResponse>>>,

  // DR reconciliation: the offer's report, a page of lost keys and a restore's or discard's outcome, whole.
  Holds<SameJson<OfferReportWire, Server<typeof api.OfferResponse>>>,
  Holds<SameJson<LostKeysWire, Server<typeof api.LostKeysResponse>>>,
  Holds<SameJson<ReconcileOutcomeWire, Server<typeof api.ReconcileResponse>>>,

  // Rebalancing: the status every rebalance route answers with, whole, and the type the SDK returns it as.
  Holds<SameJson<RebalanceWire, Server<typeof api.RebalanceResponse>>>,
  Holds<SameJson<Rebalance, Server<typeof api.RebalanceResponse>>>,

  // Block volumes (schemas/volumes.ts): every answer whole.
  Holds<SameJson<VolumeInfo, Server<typeof volumes.Volume>>>,
  Holds<SameJson<VolumeDescription, Server<typeof volumes.VolumeDescription>>>,
  Holds<SameJson<VolumeList, Server<typeof volumes.VolumeList>>>,
  Holds<SameJson<VolumeDeletion, Server<typeof volumes.VolumeDeletion>>>,
  Holds<SameJson<VolumeWriteAck, Server<typeof volumes.VolumeWriteAck>>>,
  Holds<SameJson<VolumeLease, Server<typeof volumes.VolumeLease>>>,
];
