// Shutdown order written once (VS Code's DisposableStore pattern): what a service opens is added
// to its store as it is opened, and the store disposes in the reverse order, so whatever was
// opened on top of something (a job manager on the database, an event forward on a manager) is
// closed before it. Every item is disposed even when one fails; failures are reported, not lost.
// common/: no Node, no DOM.

/** A function to call, or an object to dispose, when the store is disposed. */
export type Disposal = (() => unknown) | { dispose(): unknown };

export class DisposableStore {
  private readonly items: Disposal[] = [];
  private disposing: Promise<void> | undefined;

  /**
   * `report`: where an item's failure goes; the other items are disposed all the same. Without
   * it, `dispose()` rejects with the first failure once every item has been disposed.
   */
  constructor(private readonly report?: (error: unknown) => void) {}

  get disposed(): boolean {
    return this.disposing !== undefined;
  }

  /**
   * Adds `item` (disposed before everything added earlier). Added after dispose, it is disposed
   * once the store is; its failure goes to `report`, or is left an unhandled rejection (never lost).
   */
  add<T extends Disposal>(item: T): T {
    if (!this.disposing) this.items.push(item);
    else {
      const late = this.disposing.then(() => disposeOne(item));
      if (this.report) late.catch(this.report);
    }
    return item;
  }

  /** Disposes every item, the last added first, one at a time. Idempotent. */
  dispose(): Promise<void> {
    this.disposing ??= (async () => {
      let first: { error: unknown } | undefined;
      for (const item of this.items.splice(0).reverse()) {
        try {
          await disposeOne(item);
        } catch (e) {
          if (this.report) this.report(e);
          else first ??= { error: e };
        }
      }
      if (first) throw first.error;
    })();
    return this.disposing;
  }
}

async function disposeOne(item: Disposal): Promise<void> {
  await (typeof item === 'function' ? item() : item.dispose());
}
