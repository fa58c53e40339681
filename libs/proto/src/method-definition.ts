// How a protobuf-es method descriptor appears to grpc-js: its path and a definition whose
// (de)serializers pass bytes through (the adapter encodes and decodes itself).
import type * as grpc from '@grpc/grpc-js';
import type { DescMethod } from '@bufbuild/protobuf';
import { passBytes } from './codec.js';

/** The grpc-js definition of one method, with pass-through (de)serializers. */
export function methodDefinition(method: DescMethod): grpc.MethodDefinition<Buffer, Buffer> {
  return {
    path: methodPath(method),
    requestStream:
      method.methodKind === 'client_streaming' || method.methodKind === 'bidi_streaming',
    responseStream:
      method.methodKind === 'server_streaming' || method.methodKind === 'bidi_streaming',
    requestSerialize: passBytes,
    requestDeserialize: passBytes,
    responseSerialize: passBytes,
    responseDeserialize: passBytes,
    originalName: method.localName,
  };
}

/** `/tessera.v1.CatalogService/GetCatalog`. */
export function methodPath(method: DescMethod): string {
  return `/${method.parent.typeName}/${method.name}`;
}
