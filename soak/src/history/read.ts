// Reads a history file line by line (a long run's history is larger than one string may be).
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseHistoryLine, type HistoryEvent } from '../checker/history.js';

export async function readHistoryFile(
  path: string,
): Promise<{ events: HistoryEvent[]; malformed: string[] }> {
  const events: HistoryEvent[] = [];
  const malformed: string[] = [];
  let n = 0;
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  for await (const line of lines) {
    const e = parseHistoryLine(line, ++n);
    if (typeof e === 'string') malformed.push(e);
    else if (e) events.push(e);
  }
  return { events, malformed };
}
