// A small reflection client (what grpcurl does first): list a server's services and fetch the file
// descriptors defining a symbol, as a protobuf-es FileRegistry whose services createClient can call.
import { createFileRegistry, fromBinary } from '@bufbuild/protobuf';
import type { FileRegistry, Message } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import type { FileDescriptorProto } from '@bufbuild/protobuf/wkt';
import { createClient, type BidiStream } from './client.js';
import type { DescMessage } from '@bufbuild/protobuf';
import { Code, RpcError } from './errors.js';
import { reflectionService, type ReflectionVersion } from './reflection-protocol.js';

export interface ReflectionOptions {
  /** v1 by default. */
  version?: ReflectionVersion;
  token?: string;
  /** 10 seconds by default. */
  deadlineMs?: number;
}

// The reflection messages are built from a runtime descriptor, so they are read by field name.
interface ReflectionResponse {
  listServicesResponse?: { service: { name: string }[] };
  fileDescriptorResponse?: { fileDescriptorProto: Uint8Array[] };
  errorResponse?: { errorCode: number; errorMessage: string };
}

/** Full names of the services the server at `address` offers (including reflection itself). */
export async function reflectionListServices(
  address: string,
  opts: ReflectionOptions = {},
): Promise<string[]> {
  const res = await ask(address, { case: 'listServices', value: '*' }, opts);
  if (!res.listServicesResponse)
    throw new RpcError(Code.INTERNAL, 'reflection answered a list request with something else');
  return res.listServicesResponse.service.map((s) => s.name).sort();
}

/**
 * The file that defines `symbol` (a service, method, message or enum full name) and every file it
 * imports, as a registry: `registry.getService('tessera.v1.CatalogService')`. Imports the server
 * left out are fetched by file name.
 */
export async function reflectionFileContaining(
  address: string,
  symbol: string,
  opts: ReflectionOptions = {},
): Promise<FileRegistry> {
  const byName = new Map<string, FileDescriptorProto>();
  const add = (res: ReflectionResponse): FileDescriptorProto[] => {
    const protos = (res.fileDescriptorResponse?.fileDescriptorProto ?? []).map((b) =>
      fromBinary(FileDescriptorProtoSchema, b),
    );
    for (const p of protos) if (!byName.has(p.name)) byName.set(p.name, p);
    return protos;
  };
  const [main] = add(await ask(address, { case: 'fileContainingSymbol', value: symbol }, opts));
  if (!main) throw new RpcError(Code.NOT_FOUND, `reflection returned no file for ${symbol}`);
  for (let missing = missingImports(byName); missing.length > 0; missing = missingImports(byName)) {
    for (const name of missing) {
      const before = byName.size;
      add(await ask(address, { case: 'fileByFilename', value: name }, opts));
      if (!byName.has(name) || byName.size === before)
        throw new RpcError(
          Code.NOT_FOUND,
          `reflection has no file ${name}, imported by ${main.name}`,
        );
    }
  }
  return createFileRegistry(main, (name) => byName.get(name));
}

function missingImports(byName: Map<string, FileDescriptorProto>): string[] {
  return [...new Set([...byName.values()].flatMap((p) => p.dependency))].filter(
    (d) => !byName.has(d),
  );
}

/** One request on its own reflection stream; the stream is closed after the first answer. */
async function ask(
  address: string,
  messageRequest: { case: string; value: string },
  opts: ReflectionOptions,
): Promise<ReflectionResponse> {
  const version = opts.version ?? 'v1';
  const service = reflectionService(version);
  const client = createClient(service, address, {
    ...(opts.token === undefined ? {} : { token: opts.token }),
  });
  try {
    const open = client['serverReflectionInfo'] as (o?: {
      deadlineMs?: number;
    }) => BidiStream<DescMessage, DescMessage>;
    const stream = open({ deadlineMs: opts.deadlineMs ?? 10_000 });
    stream.send({ host: '', messageRequest } as Record<string, unknown>);
    stream.end();
    for await (const msg of stream) {
      const res = msg as Message &
        ReflectionResponse & { messageResponse?: { case?: string; value?: unknown } };
      const answer = flatten(res);
      if (answer.errorResponse)
        throw new RpcError(
          answer.errorResponse.errorCode as Code,
          answer.errorResponse.errorMessage,
        );
      return answer;
    }
    throw new RpcError(
      Code.UNAVAILABLE,
      `reflection at ${address} closed the stream without answering`,
    );
  } finally {
    client.close();
  }
}

// protobuf-es puts the oneof `message_response` under { case, value }.
function flatten(res: {
  messageResponse?: { case?: string; value?: unknown };
}): ReflectionResponse {
  const r = res.messageResponse;
  if (!r?.case) return {};
  return { [r.case]: r.value } as ReflectionResponse;
}
