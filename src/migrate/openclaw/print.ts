// The plan as the owner reads it, before anything is written: what will be brought, what is already
// here, what is not brought and why, and the files that could not be read.
import type { Plan } from './plan.js';

export function planLines(plan: Plan, source: string, era: string, version: string | undefined): string[] {
  const out: string[] = [`OpenClaw home ${source} (${era === 'sqlite' ? 'SQLite era, 2026.8.1 or later' : 'files era, up to 2026.7'}${version ? `, written by ${version}` : ''})`];
  const section = (title: string, items: string[]) => {
    if (!items.length) return;
    out.push('', `${title}:`);
    for (const i of items) out.push(`  ${i}`);
  };
  section('will bring', [
    ...plan.configSet.map((c) => `config ${c.key} = ${c.shown}  (from ${c.from})`),
    ...plan.files.map((f) => `workspace file ${f.to}${f.replacesStarter ? ' (replaces the starter file)' : ''}  (from ${f.from})`),
    ...plan.skills.map((s) => `skill ${s.name}, installed disabled (pinclaw skills enable ${s.name})  (from ${s.from})`),
    ...plan.jobs.map((j) => `cron job ${j.label}: ${j.row.kind} ${j.row.expr}${j.row.state === 'paused' ? ', paused as in OpenClaw' : ''}, replies to ${j.row.channel === 'cron' ? 'the log' : `${j.row.channel}:${j.row.chat_id}`}`),
    ...plan.sessions.map((s) => `session ${s.key}: ${s.messages.length} messages${s.skipped ? ` (${s.skipped} tool or other events left out)` : ''}  (from ${s.from})`),
  ]);
  section('already here (nothing to do)', plan.already);
  section('not brought', plan.notMapped.map((n) => `${n.what}: ${n.why}`));
  section('notes', plan.notes);
  section('could not read (fix or remove, then run again: what is already here is not brought twice)', plan.problems);
  return out;
}
