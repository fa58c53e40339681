// Public surface of @tessera/proto: the generated tessera.v1 messages, enums and services, the
// grpc-js adapter (addService / createClient), server reflection and its client, and the address
// helpers services use to decide on tokens.

// --- generated (proto/tessera/v1/*.proto; regenerate with `npm run generate`) ---
export {
  file_tessera_v1_catalog,
  type Node,
  NodeSchema,
  type Keyspace,
  KeyspaceSchema,
  type Range,
  RangeSchema,
  type Table,
  TableSchema,
  type RouterInfo,
  RouterInfoSchema,
  type Catalog,
  CatalogSchema,
  type GetCatalogRequest,
  GetCatalogRequestSchema,
  type WatchCatalogRequest,
  WatchCatalogRequestSchema,
  type RegisterRouterRequest,
  RegisterRouterRequestSchema,
  type RegisterRouterResponse,
  RegisterRouterResponseSchema,
  type AckEpochRequest,
  AckEpochRequestSchema,
  type AckEpochResponse,
  AckEpochResponseSchema,
  type ListRoutersRequest,
  ListRoutersRequestSchema,
  type ListRoutersResponse,
  ListRoutersResponseSchema,
  NodeRole,
  NodeRoleSchema,
  NodeState,
  NodeStateSchema,
  KeyType,
  KeyTypeSchema,
  RangeState,
  RangeStateSchema,
  TableKind,
  TableKindSchema,
  CatalogService,
  RouterService,
} from './gen/tessera/v1/catalog_pb.js';
export {
  file_tessera_v1_admin,
  type ChangeResponse,
  ChangeResponseSchema,
  type AddNodeRequest,
  AddNodeRequestSchema,
  type RemoveNodeRequest,
  RemoveNodeRequestSchema,
  type CreateKeyspaceRequest,
  CreateKeyspaceRequestSchema,
  type SplitRangeRequest,
  SplitRangeRequestSchema,
  type MergeRangesRequest,
  MergeRangesRequestSchema,
  type SetRangeOwnerRequest,
  SetRangeOwnerRequestSchema,
  type SetRangeStateRequest,
  SetRangeStateRequestSchema,
  type DistributeTableRequest,
  DistributeTableRequestSchema,
  type ReferenceTableRequest,
  ReferenceTableRequestSchema,
  type DropTableRequest,
  DropTableRequestSchema,
  AdminService,
} from './gen/tessera/v1/admin_pb.js';
export {
  file_tessera_v1_ops,
  type JobStep,
  JobStepSchema,
  type Job,
  JobSchema,
  type SubmitJobRequest,
  SubmitJobRequestSchema,
  type GetJobRequest,
  GetJobRequestSchema,
  type ListJobsRequest,
  ListJobsRequestSchema,
  type ListJobsResponse,
  ListJobsResponseSchema,
  type ClaimJobRequest,
  ClaimJobRequestSchema,
  type ClaimJobResponse,
  ClaimJobResponseSchema,
  type ReportStepRequest,
  ReportStepRequestSchema,
  type CancelJobRequest,
  CancelJobRequestSchema,
  type DecideRequest,
  DecideRequestSchema,
  type DecideResponse,
  DecideResponseSchema,
  type GetDecisionRequest,
  GetDecisionRequestSchema,
  type TxnRecord,
  TxnRecordSchema,
  type ListInDoubtRequest,
  ListInDoubtRequestSchema,
  type InDoubtTxn,
  InDoubtTxnSchema,
  type ListInDoubtResponse,
  ListInDoubtResponseSchema,
  type ResolveRequest,
  ResolveRequestSchema,
  type ResolveResponse,
  ResolveResponseSchema,
  type AgentReport,
  AgentReportSchema,
  type AgentDirective,
  AgentDirectiveSchema,
  JobState,
  JobStateSchema,
  Decision,
  DecisionSchema,
  JobService,
  TxnService,
  AgentService,
} from './gen/tessera/v1/ops_pb.js';

// --- protobuf-es helpers callers need with these messages ---
export {
  create,
  clone,
  equals,
  toBinary,
  fromBinary,
  toJson,
  toJsonString,
  fromJson,
} from '@bufbuild/protobuf';
export type {
  DescMessage,
  DescMethod,
  DescService,
  MessageInitShape,
  MessageShape,
} from '@bufbuild/protobuf';

// --- the catalog's messages as @tessera/keyspace's domain types ---
export { catalogFromMessage, keyTypeName, keyTypeOf, parseKeyType } from './catalog-mapper.js';

// --- errors and addresses ---
export { Code, RpcError, codeName, toRpcError } from './errors.js';
export { parseAddress, formatAddress, isLoopback, type HostPort } from './address.js';

// --- serving ---
export {
  addService,
  type AddServiceOptions,
  type Authorize,
  type BidiStreamingImpl,
  type CallContext,
  type CallInfo,
  type ClientStreamingImpl,
  type MethodImpl,
  type ServerCallHook,
  type ServerStreamingImpl,
  type ServiceImpl,
  type UnaryImpl,
} from './server.js';
export { methodPath } from './method-definition.js';

// --- calling ---
export {
  createClient,
  type BidiStream,
  type BidiStreamingCall,
  type CallOptions,
  type Client,
  type ClientOptions,
  type ClientStreamingCall,
  type MethodCall,
  type ServerStreamingCall,
  type UnaryCall,
} from './client.js';

// --- server reflection ---
export { addReflection } from './reflection-server.js';
export {
  reflectionListServices,
  reflectionFileContaining,
  type ReflectionOptions,
} from './reflection-client.js';
export type { ReflectionVersion } from './reflection-protocol.js';
export type { FileRegistry } from '@bufbuild/protobuf';

export { TESSERA_SERVICES } from './services.js';
