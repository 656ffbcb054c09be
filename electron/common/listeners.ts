// Listeners called after a change: the observation hooks of long-lived objects (what the service
// admits, a llama backend's steps, a remote backend's endpoints), each a method that takes a
// listener and returns its removal, so a caller waits for the change it needs instead of polling.
export class Listeners {
  private readonly listeners = new Set<() => void>();

  /** Adds `listener`; returns its removal. */
  add(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Calls every listener (one added or removed meanwhile counts from the next call). */
  call(): void {
    for (const listener of [...this.listeners]) listener();
  }
}
