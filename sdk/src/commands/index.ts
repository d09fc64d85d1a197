// The commands, one module each, and the shapes they take and return. Only the public ones are
// re-exported: the wire readers stay internal to the SDK and its tests.

export { RingstoreCommand, type CommandContext, type Consistency } from './command';
export { GetCommand, type GetCommandInput, type GetCommandOutput } from './GetCommand';
export { BatchGetCommand, type BatchGetCommandInput, type BatchGetCommandOutput, type BatchGetItem } from './BatchGetCommand';
export { HeadCommand, type HeadCommandInput, type HeadCommandOutput } from './HeadCommand';
export { PutCommand, type PutCommandInput, type PutCommandOutput, type UploadTicket, type WriteOutput } from './PutCommand';
export { IncrementCommand, type IncrementCommandInput, type IncrementCommandOutput } from './IncrementCommand';
export { DeleteCommand, type DeleteCommandInput, type DeleteCommandOutput } from './DeleteCommand';
export { ListCommand, type ListCommandInput, type ListCommandOutput, type ListItem } from './ListCommand';
export {
  TransactCommand,
  type TransactCommandInput,
  type TransactCommandOutput,
  type TransactOp,
  type TransactRead,
} from './TransactCommand';
export { WatchCommand, type WatchChange, type WatchCommandInput, type WatchCommandOutput, type WatchOperation } from './WatchCommand';
export { RingCommand, type RingCommandInput, type RingCommandOutput, type RingRange, type RingShard } from './RingCommand';
export { CreateApiKeyCommand, type ApiKeyRole, type CreateApiKeyCommandInput, type CreateApiKeyCommandOutput } from './CreateApiKeyCommand';
export { RevokeApiKeyCommand, type RevokeApiKeyCommandInput, type RevokeApiKeyCommandOutput } from './RevokeApiKeyCommand';
export {
  CreatePrincipalMappingCommand,
  DeletePrincipalMappingCommand,
  ListPrincipalMappingsCommand,
  type CreatePrincipalMappingCommandInput,
  type PrincipalMapping,
  type PrincipalMappingListWire,
} from './PrincipalMappingCommands';
export { ListAuditEntriesCommand, type AuditEntry, type AuditPageWire, type ListAuditEntriesCommandInput } from './ListAuditEntriesCommand';
export { RotateApiKeyCommand, type RotateApiKeyCommandInput, type RotateApiKeyCommandOutput } from './RotateApiKeyCommand';
export {
  ListApiKeysCommand,
  type ApiKeyDescription,
  type ListApiKeysCommandInput,
  type ListApiKeysCommandOutput,
} from './ListApiKeysCommand';
export {
  GetNamespaceSettingsCommand,
  type GetNamespaceSettingsCommandInput,
  type NamespaceSettings,
  type DrMode,
  type RateLimit,
  type StorageQuota,
} from './GetNamespaceSettingsCommand';
export { SetNamespaceSettingsCommand, type SetNamespaceSettingsCommandInput } from './SetNamespaceSettingsCommand';
export { DescribeShardsCommand, type DescribeShardsCommandOutput } from './DescribeShardsCommand';
export { RepairCommand, type RepairCommandOutput } from './RepairCommand';
export {
  ListFailoversCommand,
  StartFailoverCommand,
  type FailoverRecord,
  type ListFailoversCommandOutput,
  type StartFailoverCommandInput,
  type StartFailoverCommandOutput,
} from './StartFailoverCommand';
export { DescribeDrCommand, type DrStatus } from './DescribeDrCommand';
export {
  GetPromotionReportCommand,
  PromoteCommand,
  StartDrSyncCommand,
  type DrSyncProgress,
  type PromoteCommandInput,
  type PromoteCommandOutput,
  type PromotionReport,
} from './PromoteCommand';
export {
  ListLostKeysCommand,
  OfferLostValuesCommand,
  ReconcileCommand,
  type ListLostKeysCommandInput,
  type ListLostKeysCommandOutput,
  type LostKey,
  type OfferLostValuesCommandInput,
  type OfferReport,
  type ReconcileCommandInput,
  type ReconcileCommandOutput,
} from './ReconcileCommand';
export {
  CancelRebalanceCommand,
  DescribeRebalanceCommand,
  PauseRebalanceCommand,
  ResumeRebalanceCommand,
  SetRebalanceRateCommand,
  StartRebalanceCommand,
  type DescribeRebalanceCommandInput,
  type Rebalance,
  type RebalanceActionInput,
  type RebalanceRange,
  type RebalanceStatus,
  type SetRebalanceRateCommandInput,
  type StartRebalanceCommandInput,
} from './StartRebalanceCommand';
export {
  AttachVolumeCommand,
  DetachVolumeCommand,
  type AttachVolumeCommandInput,
  type DetachVolumeCommandInput,
  type VolumeDetached,
} from './VolumeLeaseCommands';
export {
  CreateVolumeCommand,
  DeleteVolumeCommand,
  DescribeVolumeCommand,
  ListVolumesCommand,
  ReadVolumeCommand,
  TrimVolumeCommand,
  WriteVolumeCommand,
  type CreateVolumeCommandInput,
  type ListVolumesCommandInput,
  type ReadVolumeCommandInput,
  type TrimVolumeCommandInput,
  type VolumeCommandInput,
  type VolumeDeletion,
  type VolumeDescription,
  type VolumeInfo,
  type VolumeLease,
  type VolumeList,
  type VolumeWriteAck,
  type WriteVolumeCommandInput,
} from './VolumeCommands';
export {
  CreateVolumeSnapshotCommand,
  DeleteVolumeSnapshotCommand,
  ListVolumeSnapshotsCommand,
  ReadVolumeSnapshotCommand,
  type ReadVolumeSnapshotCommandInput,
  type VolumeSnapshotCommandInput,
  type VolumeSnapshotDeletion,
  type VolumeSnapshotInfo,
} from './VolumeSnapshotCommands';
