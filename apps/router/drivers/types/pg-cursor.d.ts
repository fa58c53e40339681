// pg-cursor ships no types; the node-postgres program uses only this much of it.
declare module 'pg-cursor' {
  import type { Submittable } from 'pg';
  export default class Cursor<R = Record<string, unknown>> implements Submittable {
    constructor(text: string, values?: unknown[]);
    submit: Submittable['submit'];
    read(rows: number): Promise<R[]>;
    close(): Promise<void>;
  }
}
