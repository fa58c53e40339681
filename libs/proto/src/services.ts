// The list of every tessera.v1 service, for reflection and for tests that serve them all.
import type { DescService } from '@bufbuild/protobuf';
import { AdminService } from './gen/tessera/v1/admin_pb.js';
import { CatalogService, RouterService } from './gen/tessera/v1/catalog_pb.js';
import {
  AgentService,
  JobService,
  RouterLeaseService,
  TxnService,
} from './gen/tessera/v1/ops_pb.js';
import { CoordinatorService } from './gen/tessera/v1/ha_pb.js';

export const TESSERA_SERVICES: readonly DescService[] = [
  CatalogService,
  RouterService,
  AdminService,
  JobService,
  TxnService,
  AgentService,
  RouterLeaseService,
  CoordinatorService,
];
