// The agent's report stream to the coordinator (AgentService.Report): opened on the active
// coordinator of the list, reopened with backoff whenever it ends, so reports resume after a
// coordinator failover without any configuration change.
import {
  AgentService,
  createClient,
  type AgentDirective,
  type AgentDirectiveSchema,
  type AgentReportSchema,
  type BidiStream,
  type Client,
  type MessageInitShape,
} from '@tessera/proto';
import type { Logger } from '@tessera/telemetry';

type Report = MessageInitShape<typeof AgentReportSchema>;

const BACKOFF_MIN_MS = 100;
const BACKOFF_MAX_MS = 2_000;

export class CoordinatorLink {
  private readonly client: Client<typeof AgentService>;
  private stream: BidiStream<typeof AgentReportSchema, typeof AgentDirectiveSchema> | undefined;
  private stopped = false;
  private wake: (() => void) | undefined;
  /** Whether the current stream has received anything (it is on an active coordinator). */
  connected = false;

  constructor(
    coordinators: readonly string[],
    token: string | undefined,
    private readonly onDirective: (d: AgentDirective) => void,
    private readonly log: Logger,
  ) {
    this.client = createClient(AgentService, coordinators, token !== undefined ? { token } : {});
  }

  start(): void {
    void this.loop();
  }

  /** Sends a report on the open stream; false when none is open (it is dropped). */
  send(report: Report): boolean {
    if (!this.stream) return false;
    this.stream.send(report);
    return true;
  }

  private async loop(): Promise<void> {
    let backoff = BACKOFF_MIN_MS;
    let lastError = '';
    while (!this.stopped) {
      const stream = this.client.report();
      this.stream = stream;
      this.connected = false;
      const openedAt = performance.now();
      try {
        for await (const d of stream) {
          if (!this.connected) {
            this.connected = true;
            backoff = BACKOFF_MIN_MS;
            if (lastError !== '') this.log.info('reporting to the coordinator again');
            lastError = '';
          }
          this.onDirective(d);
        }
        if (!this.stopped) this.log.warn('the coordinator ended the report stream; reopening');
      } catch (e) {
        if (this.stopped) break;
        const message = e instanceof Error ? e.message : String(e);
        if (message !== lastError)
          this.log.warn(
            { err: message, retryInMs: backoff },
            'the report stream failed; reopening',
          );
        lastError = message;
      }
      this.stream = undefined;
      this.connected = false;
      // A stream that lived a while was a good one: start over from the shortest pause.
      if (performance.now() - openedAt > 5_000) backoff = BACKOFF_MIN_MS;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, backoff);
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
    }
  }

  stop(): void {
    this.stopped = true;
    this.stream?.cancel();
    this.wake?.();
    this.client.close();
  }
}
