// One holder at a time, in arrival order: the leader session runs one transaction at a time.
export class Mutex {
  private tail: Promise<void> = Promise.resolve();
  private holders = 0;

  /** Resolves with the release function once it is this caller's turn. */
  lock(): Promise<() => void> {
    let release!: () => void;
    const next = new Promise<void>((resolve) => (release = resolve));
    const turn = this.tail.then(() => {
      this.holders++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        this.holders--;
        release();
      };
    });
    this.tail = this.tail.then(() => next);
    return turn;
  }

  get busy(): boolean {
    return this.holders > 0;
  }
}
