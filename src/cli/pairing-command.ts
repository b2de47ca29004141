// `pinclaw pairing list | approve CODE | revoke CHANNEL ID`: who may talk to pinclaw besides the
// configured allow-lists (Telegram users, dashboard browsers).
import { PinclawError, UsageError } from '../errors.js';
import { openProcess } from '../setup/process.js';
import { approveCommand } from '../channels/pairing-hint.js';
import { approvePairing, listPairings, PAIRING_CODE_TTL_MS, revokePairing } from '../store/pairing.js';
import { parseCommandArgs } from './args.js';
import type { CliContext } from './context.js';

const USAGE = { list: 'pinclaw pairing list [--json]', approve: 'pinclaw pairing approve CODE', revoke: 'pinclaw pairing revoke CHANNEL ID' } as const;

export async function runPairing(sub: keyof typeof USAGE, rawArgs: string[], ctx: CliContext): Promise<number> {
  const args = parseCommandArgs(rawArgs, {}, USAGE[sub]).positionals;
  const need = { list: 0, approve: 1, revoke: 2 }[sub];
  if (args.length !== need) throw new UsageError(`usage: ${USAGE[sub]}`);
  const { config, db } = await openProcess(ctx);
  try {
    if (sub === 'approve') {
      const r = approvePairing(db, args[0]!);
      if (!r.ok) throw new PinclawError(r.reason);
      ctx.out(`approved ${r.pairing.channel} ${r.pairing.label ?? r.pairing.subject} (${r.pairing.subject})`);
      return 0;
    }
    if (sub === 'revoke') {
      if (!revokePairing(db, args[0]!, args[1]!)) throw new PinclawError(`no pairing for ${args[0]} ${args[1]}; pinclaw pairing list shows them`);
      ctx.out(`revoked ${args[0]} ${args[1]}`);
      return 0;
    }
    const now = Date.now();
    const rows = listPairings(db).map((p) => ({
      channel: p.channel, id: p.subject, label: p.label, state: p.state,
      ...(p.state === 'pending' ? { code: p.code, expired: now - p.created_at >= PAIRING_CODE_TTL_MS } : {}),
      since: new Date(p.approved_at ?? p.created_at).toISOString(),
    }));
    if (ctx.json) ctx.out(JSON.stringify(rows, null, 2));
    else if (rows.length === 0) ctx.out('no pairings and no pending requests');
    else {
      for (const r of rows) {
        const what = r.state === 'approved' ? 'approved' : r.expired ? `code ${r.code} (expired)` : `pending: ${approveCommand(r.code!, ctx.paths.home)}`;
        ctx.out(`${r.channel}\t${r.id}\t${r.label ?? ''}\t${what}\t${r.since}`);
      }
    }
    return 0;
  } finally {
    db.close();
  }
}
