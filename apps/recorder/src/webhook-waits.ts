/**
 * The changes that wait, pending, for their webhook's own change (docs/records.md, In order): each
 * waits at most `waitMs` from when this recorder first found its webhook missing (a backlog, or a
 * store away for longer, does not cut it short), and none waits for a webhook a change of which
 * this recorder set aside within `waitMs` (that change may never be written). Bounded: the oldest
 * are forgotten first, which only starts a wait again.
 */
export class WebhookWaits {
  /** `<partition>:<entry id>` → when it was first found waiting (ms). */
  private readonly since = new Map<string, number>();
  /** Webhook id → when a change of it was set aside (ms). */
  private readonly setAside = new Map<string, number>();

  constructor(
    private readonly waitMs: number,
    private readonly bound = 10_000,
  ) {}

  /** Whether the change at `key`, of `webhooks`, may wait (again); its wait starts the first time. */
  mayWait(key: string, webhooks: readonly string[], now = Date.now()): boolean {
    const recent = (webhook: string) =>
      now - (this.setAside.get(webhook) ?? -Infinity) < this.waitMs;
    const since = this.since.get(key) ?? now;
    if (now - since >= this.waitMs || webhooks.some(recent)) {
      this.since.delete(key);
      return false;
    }
    if (!this.since.has(key)) remember(this.since, key, now, this.bound);
    return true;
  }

  /** Written, or set aside: it waits no more. */
  ended(key: string): void {
    if (this.since.size > 0) this.since.delete(key);
  }

  /** A change of each of `webhooks` was set aside. */
  setAsideOf(webhooks: readonly string[], now = Date.now()): void {
    for (const webhook of webhooks) remember(this.setAside, webhook, now, this.bound);
  }

  /** Each of `webhooks` had its own change written (a re-drive, say): their changes may wait again. */
  written(webhooks: readonly string[]): void {
    if (this.setAside.size === 0) return;
    for (const webhook of webhooks) this.setAside.delete(webhook);
  }
}

function remember(map: Map<string, number>, key: string, at: number, bound: number): void {
  map.delete(key);
  map.set(key, at);
  if (map.size > bound) map.delete(map.keys().next().value!);
}
