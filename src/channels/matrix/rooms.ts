// What the channel knows of its rooms: whether an encrypted room was already told that pinclaw
// cannot read it (migration 12's matrix_rooms, so once per room across restarts), and how many
// members a room has (a DM of two is answered without a mention): the count the sync's room
// summary gives, else asked once (GET /joined_members), forgotten when the membership changes.
import type { Db } from '../../store/db.js';
import { enc, type MatrixApi } from './api.js';

export function openRooms(db: Db, api: MatrixApi) {
  const told = db.prepare('select 1 from matrix_rooms where room_id = ? and encrypted_notice_at is not null');
  const tell = db.prepare('insert into matrix_rooms (room_id, encrypted_notice_at) values (?, ?) on conflict (room_id) do update set encrypted_notice_at = excluded.encrypted_notice_at');
  const members = new Map<string, number>();
  return {
    toldEncrypted: (roomId: string) => told.get(roomId) !== undefined,
    /** run inside the transaction that queues the notice */
    markToldEncrypted: (roomId: string) => void tell.run(roomId, Date.now()),
    setMembers: (roomId: string, n: number) => void members.set(roomId, n),
    forgetMembers: (roomId: string) => void members.delete(roomId),
    async members(roomId: string, signal: AbortSignal): Promise<number> {
      const known = members.get(roomId);
      if (known !== undefined) return known;
      const r = await api.call<{ joined?: Record<string, unknown> }>('GET', `/rooms/${enc(roomId)}/joined_members`, undefined, { signal });
      const n = Object.keys(r.joined ?? {}).length;
      members.set(roomId, n);
      return n;
    },
  };
}

export type Rooms = ReturnType<typeof openRooms>;
