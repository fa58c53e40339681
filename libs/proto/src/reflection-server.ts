// gRPC server reflection (v1 and v1alpha) for services described by protobuf-es, so grpcurl can
// list, describe and call them. @grpc/reflection wants a proto-loader package definition; it reads
// only the `fileDescriptorProtos` of its entries, which we fill from the generated descriptors.
import type * as grpc from '@grpc/grpc-js';
import { toBinary } from '@bufbuild/protobuf';
import type { DescEnum, DescFile, DescMessage, DescService } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import type * as protoLoader from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { methodDefinition } from './method-definition.js';
import { reflectionService } from './reflection-protocol.js';

/** Adds grpc.reflection.v1 and v1alpha ServerReflection to `server`, describing `services` (and itself). */
export function addReflection(server: grpc.Server, services: readonly DescService[]): void {
  const pkg = packageDefinition([
    ...services,
    reflectionService('v1'),
    reflectionService('v1alpha'),
  ]);
  new ReflectionService(pkg).addToServer(server);
}

/**
 * A proto-loader-shaped package definition of `services`: one entry per service (its methods) and
 * one per message and enum of their files, each carrying the serialized FileDescriptorProtos of its
 * file and that file's imports.
 */
export function packageDefinition(services: readonly DescService[]): protoLoader.PackageDefinition {
  const pkg: protoLoader.PackageDefinition = {};
  const encoded = new Map<DescFile, Buffer>();
  const encode = (file: DescFile): Buffer => {
    let b = encoded.get(file);
    if (!b) {
      const bytes = toBinary(FileDescriptorProtoSchema, file.proto);
      b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      encoded.set(file, b);
    }
    return b;
  };
  const protosOf = (file: DescFile): Buffer[] => [file, ...importsOf(file)].map(encode);
  const typeEntry = (desc: DescMessage | DescEnum): protoLoader.ProtobufTypeDefinition => ({
    format:
      desc.kind === 'message'
        ? 'Protocol Buffer 3 DescriptorProto'
        : 'Protocol Buffer 3 EnumDescriptorProto',
    type: desc.proto,
    fileDescriptorProtos: protosOf(desc.file),
  });

  const files = new Set<DescFile>();
  for (const service of services) {
    files.add(service.file);
    const methods: protoLoader.ServiceDefinition = {};
    for (const method of service.methods) {
      methods[method.name] = {
        ...methodDefinition(method),
        originalName: method.localName,
        requestType: typeEntry(method.input) as protoLoader.MessageTypeDefinition<object, object>,
        responseType: typeEntry(method.output) as protoLoader.MessageTypeDefinition<object, object>,
        options: {},
      } as unknown as protoLoader.MethodDefinition<object, object, object, object>;
    }
    pkg[service.typeName] = methods;
  }
  for (const file of [...files].flatMap((f) => [f, ...importsOf(f)])) {
    for (const desc of [...nestedTypes(file.messages), ...file.enums])
      pkg[desc.typeName] = typeEntry(desc) as protoLoader.AnyDefinition;
  }
  return pkg;
}

function importsOf(file: DescFile): DescFile[] {
  const seen = new Set<DescFile>();
  const visit = (f: DescFile): void => {
    for (const dep of f.dependencies) {
      if (seen.has(dep)) continue;
      seen.add(dep);
      visit(dep);
    }
  };
  visit(file);
  return [...seen];
}

function nestedTypes(messages: readonly DescMessage[]): (DescMessage | DescEnum)[] {
  return messages.flatMap((m) => [m, ...m.nestedEnums, ...nestedTypes(m.nestedMessages)]);
}
