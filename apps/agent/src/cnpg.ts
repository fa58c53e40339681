// Following CloudNativePG (cnpg mode): the Cluster's status names the current and the target
// primary and the phase. While they differ, or the phase says it fails over or switches over, the
// node is changing primary. Instance names become addresses by the configured template or map.
// CloudNativePG records no synchronous set of its own (it elects by received LSN), so the
// coordinator keeps one from the primary's pg_stat_replication and refuses to follow a promotion
// of an instance outside it.
import { readFile } from 'node:fs/promises';
import { create, HaViewSchema, type HaView } from '@tessera/proto';
import type { CnpgSource } from './config.js';

interface ClusterDoc {
  metadata?: { name?: string; namespace?: string };
  status?: {
    currentPrimary?: string;
    targetPrimary?: string;
    phase?: string;
    timelineID?: number;
  };
}

export function instanceAddress(source: CnpgSource, instance: string, doc: ClusterDoc): string {
  return (
    source.addresses.get(instance) ??
    source.addressTemplate
      .replaceAll('{instance}', instance)
      .replaceAll('{cluster}', doc.metadata?.name ?? '')
      .replaceAll('{namespace}', doc.metadata?.namespace ?? '')
  );
}

/** The view from a Cluster document (pure). */
export function cnpgView(source: CnpgSource, raw: unknown): HaView {
  const doc = (raw ?? {}) as ClusterDoc;
  const st = doc.status ?? {};
  const current = st.currentPrimary ?? '';
  const target = st.targetPrimary ?? '';
  const phase = st.phase ?? '';
  const changing =
    current === '' || (target !== '' && target !== current) || /fail|switchover/i.test(phase);
  return create(HaViewSchema, {
    leader: changing || current === '' ? '' : instanceAddress(source, current, doc),
    phase: `${phase}${target !== '' && target !== current ? ` (target ${target})` : ''}`,
    changing,
    timeline: BigInt(st.timelineID ?? 0),
  });
}

const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** Reads the Cluster (file, or the Kubernetes API with the pod's service account). */
export async function readCnpg(source: CnpgSource, timeoutMs: number): Promise<HaView> {
  try {
    let doc: unknown;
    if (source.file !== undefined) doc = JSON.parse(await readFile(source.file, 'utf8'));
    else {
      const [ns, name] = (source.cluster ?? '').split('/');
      const host = process.env['KUBERNETES_SERVICE_HOST'];
      const port = process.env['KUBERNETES_SERVICE_PORT'] ?? '443';
      if (!host) throw new Error('not in a Kubernetes pod (KUBERNETES_SERVICE_HOST is unset)');
      const token = (await readFile(`${SA_DIR}/token`, 'utf8')).trim();
      const res = await fetch(
        `https://${host}:${port}/apis/postgresql.cnpg.io/v1/namespaces/${ns}/clusters/${name}`,
        { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(timeoutMs) },
      );
      if (!res.ok) throw new Error(`the Kubernetes API answered ${res.status}`);
      doc = await res.json();
    }
    return cnpgView(source, doc);
  } catch (e) {
    return create(HaViewSchema, {
      error: `cannot read the CloudNativePG Cluster: ${e instanceof Error ? e.message : String(e)}`,
    });
  }
}
