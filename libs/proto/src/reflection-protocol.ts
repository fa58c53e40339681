// The gRPC server reflection protocol's own service (v1 and v1alpha) as a protobuf-es descriptor,
// read from the .proto files @grpc/reflection ships: our client speaks it through createClient, and
// the server lists and describes it like any other service.
import { createRequire } from 'node:module';
import { createFileRegistry, fromBinary } from '@bufbuild/protobuf';
import type { DescService } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import type { DescriptorProto, FileDescriptorProto } from '@bufbuild/protobuf/wkt';
import * as protoLoader from '@grpc/proto-loader';

export type ReflectionVersion = 'v1' | 'v1alpha';

export const REFLECTION_SERVICE: Record<ReflectionVersion, string> = {
  v1: 'grpc.reflection.v1.ServerReflection',
  v1alpha: 'grpc.reflection.v1alpha.ServerReflection',
};

const cache = new Map<ReflectionVersion, DescService>();

/**
 * The ServerReflection service of `version` as a protobuf-es descriptor (cached). proto-loader
 * writes field type names relative to the package (`ExtensionRequest`); they are qualified
 * (`.grpc.reflection.v1.ExtensionRequest`) as protobuf-es and other strict readers require.
 */
export function reflectionService(version: ReflectionVersion): DescService {
  const cached = cache.get(version);
  if (cached) return cached;
  const require = createRequire(import.meta.url);
  const path = require.resolve(
    `@grpc/reflection/build/proto/grpc/reflection/${version}/reflection.proto`,
  );
  const pkg = protoLoader.loadSync(path, {});
  const byName = new Map<string, FileDescriptorProto>();
  for (const entry of Object.values(pkg)) {
    for (const bytes of (entry as Partial<protoLoader.ProtobufTypeDefinition>)
      .fileDescriptorProtos ?? []) {
      const proto = qualifyTypeNames(fromBinary(FileDescriptorProtoSchema, bytes));
      byName.set(proto.name, proto);
    }
  }
  const name = REFLECTION_SERVICE[version];
  const main = [...byName.values()].find((p) =>
    p.service.some((s) => `${p.package}.${s.name}` === name),
  );
  if (!main) throw new Error(`@grpc/reflection's ${version} proto has no ${name}`);
  const service = createFileRegistry(main, (file) => byName.get(file)).getService(name);
  if (!service) throw new Error(`${name} did not load from @grpc/reflection's ${version} proto`);
  cache.set(version, service);
  return service;
}

function qualifyTypeNames(file: FileDescriptorProto): FileDescriptorProto {
  const qualify = (typeName: string): string =>
    typeName === '' || typeName.startsWith('.') ? typeName : `.${file.package}.${typeName}`;
  const visit = (messages: DescriptorProto[]): void => {
    for (const m of messages) {
      for (const f of m.field) f.typeName = qualify(f.typeName);
      visit(m.nestedType);
    }
  };
  visit(file.messageType);
  for (const s of file.service) {
    for (const m of s.method) {
      m.inputType = qualify(m.inputType);
      m.outputType = qualify(m.outputType);
    }
  }
  return file;
}
