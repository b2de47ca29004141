// The Pairings view: requests waiting for the owner (approve) and who is paired (revoke), with the
// store's functions `pinclaw pairing` uses, so both say the same and change the same rows.
import type { Db } from '../../../store/db.js';
import { approvePairing, listPairings, PAIRING_CODE_TTL_MS, revokePairing } from '../../../store/pairing.js';
import { Refusal } from './refusal.js';

export function pairings(db: Db) {
  const now = Date.now();
  return {
    pairings: listPairings(db).map((p) => ({
      channel: p.channel,
      id: p.subject,
      label: p.label,
      state: p.state,
      ...(p.state === 'pending' ? { code: p.code, expired: now - p.created_at >= PAIRING_CODE_TTL_MS } : {}),
      since: new Date(p.approved_at ?? p.created_at).toISOString(),
    })),
  };
}

const text = (b: unknown, k: string) => {
  const v = (b as Record<string, unknown> | null)?.[k];
  return typeof v === 'string' && v.trim() ? v.trim() : undefined;
};

/** POST /api/pairings/approve {"code":"..."} */
export function approve(db: Db, body: unknown) {
  const code = text(body, 'code');
  if (!code) throw new Refusal(400, 'code: expected the pairing code of a waiting request');
  const r = approvePairing(db, code);
  if (!r.ok) throw new Refusal(400, r.reason);
  return { approved: { channel: r.pairing.channel, id: r.pairing.subject, label: r.pairing.label } };
}

/** POST /api/pairings/revoke {"channel":"telegram","id":"12345"} */
export function revoke(db: Db, body: unknown) {
  const channel = text(body, 'channel');
  const id = text(body, 'id');
  if (!channel || !id) throw new Refusal(400, 'channel and id: expected the pairing to revoke, as the list shows it');
  if (!revokePairing(db, channel, id)) throw new Refusal(404, `no pairing for ${channel} ${id}; the list shows them`);
  return { revoked: { channel, id } };
}
