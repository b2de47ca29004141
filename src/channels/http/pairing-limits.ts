// How many dashboard pairing requests may wait for the owner, per client and in all. A single global
// limit let one address fill it and block pairing for everyone for an hour; so each client (an IPv4
// address or an IPv6 /64, as guard.ts counts them) may have a few requests waiting, and the table as
// a whole is bounded by pushing out the oldest request of the client that has the most waiting
// rather than by refusing the next client. Which client asked is kept in memory only: after a
// restart the requests already waiting count for nobody but still count toward the bound.
import type { Db } from '../../store/db.js';
import { listPairings, PAIRING_CODE_TTL_MS, revokePairing } from '../../store/pairing.js';

export interface PairingLimitOptions {
  /** requests one client may have waiting */
  perClient?: number;
  /** requests waiting in all, past which the busiest client's oldest one is dropped */
  total?: number;
}

export const PAIRING_LIMITS = { perClient: 3, total: 64 } as const;

export type PairingAdmission = { ok: true } | { ok: false; waiting: number };

export class PairingLimits {
  private readonly perClient: number;
  private readonly total: number;
  // request id -> the client that asked
  private readonly owner = new Map<string, string>();

  constructor(private readonly channel: string, o: PairingLimitOptions = {}) {
    this.perClient = o.perClient ?? PAIRING_LIMITS.perClient;
    this.total = o.total ?? PAIRING_LIMITS.total;
  }

  /**
   * Whether `client` may ask for one more request; makes room in the table when it is full. Expired
   * requests are removed on the way: they can never be approved and only take room.
   */
  admit(db: Db, client: string, now = Date.now()): PairingAdmission {
    const waiting: { id: string; client: string | undefined }[] = [];
    for (const p of listPairings(db)) {
      if (p.channel !== this.channel || p.state !== 'pending') continue;
      if (now - p.created_at >= PAIRING_CODE_TTL_MS) revokePairing(db, p.channel, p.subject);
      else waiting.push({ id: p.subject, client: this.owner.get(p.subject) });
    }
    // Forget the requests that were approved, collected, revoked or expired.
    const live = new Set(waiting.map((w) => w.id));
    for (const id of this.owner.keys()) if (!live.has(id)) this.owner.delete(id);

    const byClient = new Map<string, string[]>();
    // listPairings orders by creation, so each list is oldest first.
    for (const w of waiting) {
      const key = w.client ?? '';
      byClient.set(key, [...(byClient.get(key) ?? []), w.id]);
    }
    const mine = byClient.get(client)?.length ?? 0;
    if (mine >= this.perClient) return { ok: false, waiting: mine };
    if (waiting.length >= this.total) {
      let busiest: string[] = [];
      for (const ids of byClient.values()) if (ids.length > busiest.length) busiest = ids;
      const oldest = busiest[0] ?? waiting[0]!.id;
      revokePairing(db, this.channel, oldest);
      this.owner.delete(oldest);
    }
    return { ok: true };
  }

  /** Records that `client` asked for request `id` (after admit said yes). */
  asked(client: string, id: string): void {
    this.owner.set(id, client);
  }
}
