// Message bytes in and out of grpc-js. grpc-js is given identity (de)serializers and the adapter
// encodes and decodes itself, so a malformed request becomes INVALID_ARGUMENT (grpc-js would answer
// INTERNAL) and an unencodable response becomes a status instead of a thrown exception.
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import type { DescMessage, MessageInitShape, MessageShape } from '@bufbuild/protobuf';
import { Code, RpcError } from './errors.js';

export function encode<Desc extends DescMessage>(
  schema: Desc,
  init: MessageInitShape<Desc>,
): Buffer {
  const bytes = toBinary(schema, create(schema, init));
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Decodes a request; throws RpcError(INVALID_ARGUMENT) naming the type when the bytes are bad. */
export function decodeRequest<Desc extends DescMessage>(
  schema: Desc,
  bytes: Uint8Array,
): MessageShape<Desc> {
  try {
    return fromBinary(schema, bytes);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw new RpcError(Code.INVALID_ARGUMENT, `malformed ${schema.typeName}: ${why}`);
  }
}

/** grpc-js (de)serializer that hands the bytes through untouched. */
export function passBytes(bytes: Buffer): Buffer {
  return bytes;
}
