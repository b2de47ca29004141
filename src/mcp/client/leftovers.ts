// What a gateway killed with SIGKILL (or a crash, or the OOM killer) leaves of its stdio servers,
// and the next gateway's start that ends it. The kernel's parent-death signal kills a server's
// leader with the gateway, but not what the leader started: under Landlock and unconfined those
// stay in the server's process group (seccomp keeps a sandboxed one from leaving it), reparented to
// init. (Under bubblewrap nothing survives: --die-with-parent and the pid namespace take all.)
//
// So every running server has a record in $PINCLAW_HOME/run/mcp: its leader's pid and start time,
// the boot, the process that started it (gateway or `pinclaw mcp`), and a random token that is in
// the server's environment (PINCLAW_MCP_RUN), which its children inherit. The record goes when the
// server is reaped; one that is still there at a gateway's start, whose owner is dead, names a
// server that leaked. Its processes are those of its process group, while the group is known to be
// the same one (the leader still runs with its recorded start time, or a process carrying the
// token is in it: a group id is not reissued while any member lives), and any process carrying the
// token (an unconfined child that left the group with setsid). They get SIGKILL; nobody waits on
// them any more.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage } from '../../errors.js';
import { log } from '../../log.js';
import { parseStat, processTable } from '../../sandbox/proc-table.js';

/** The environment variable that marks a server's processes (and their children). */
export const RUN_TOKEN_VAR = 'PINCLAW_MCP_RUN';

interface Recorded {
  server: string;
  pid: number;
  starttime: number;
  owner: number;
  ownerStarttime: number;
  boot: string;
  token: string;
}

function bootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return 'unknown';
  }
}

function starttime(pid: number): number | undefined {
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.starttime;
  } catch {
    return undefined;
  }
}

export const newRunToken = (): string => randomBytes(16).toString('hex');

/**
 * Writes the record of a server whose leader is `pid`; returns its removal, for when the server is
 * gone. A record that cannot be written is logged: the server runs all the same.
 */
export function recordServer(dir: string, server: string, token: string, pid: number): () => void {
  const file = join(dir, `${token}.json`);
  const started = starttime(pid);
  if (started === undefined) return () => undefined; // gone already: nothing can leak of it
  const rec: Recorded = { server, pid, starttime: started, owner: process.pid, ownerStarttime: starttime(process.pid) ?? -1, boot: bootId(), token };
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(file, JSON.stringify(rec), { mode: 0o600 });
  } catch (err) {
    log.warn(`MCP server ${server}: cannot record its process in ${dir} (${errorMessage(err)}): should the gateway be killed, its children may outlive it`);
    return () => undefined;
  }
  return () => rmSync(file, { force: true });
}

function environHas(pid: number, needles: Map<string, Recorded>): Recorded | undefined {
  let env: string;
  try {
    env = readFileSync(`/proc/${pid}/environ`, 'latin1');
  } catch {
    return undefined; // gone, or not ours to read
  }
  for (const entry of env.split('\0')) {
    if (!entry.startsWith(`${RUN_TOKEN_VAR}=`)) continue;
    return needles.get(entry.slice(RUN_TOKEN_VAR.length + 1));
  }
  return undefined;
}

/** Kills what leaked of the servers recorded in `dir` whose owner is gone; returns how many processes. */
export function sweepLeftovers(dir: string): number {
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.json'));
  } catch {
    return 0;
  }
  const boot = bootId();
  const stale = new Map<string, Recorded>();
  for (const f of files) {
    let rec: Recorded;
    try {
      rec = JSON.parse(readFileSync(join(dir, f), 'utf8')) as Recorded;
    } catch {
      rmSync(join(dir, f), { force: true });
      continue;
    }
    // A server started by a process that still runs (`pinclaw mcp call` beside the gateway) is its.
    if (rec.boot === boot && starttime(rec.owner) === rec.ownerStarttime) continue;
    // After a reboot nothing of it runs; the record only goes.
    if (rec.boot === boot) stale.set(rec.token, rec);
    else rmSync(join(dir, f), { force: true });
  }
  if (!stale.size) return 0;
  const table = processTable();
  const victims = new Set<number>();
  const groups = new Set<number>();
  // A zombie has already died (it only waits for init to reap it): nothing to kill.
  const live = table.filter((p) => p.state !== 'Z' && p.pid !== process.pid);
  for (const p of live) {
    const rec = environHas(p.pid, stale);
    if (rec) {
      victims.add(p.pid);
      if (p.pgrp === rec.pid) groups.add(rec.pid);
    }
    for (const r of stale.values()) if (p.pid === r.pid && p.starttime === r.starttime) groups.add(r.pid);
  }
  for (const p of live) if (groups.has(p.pgrp)) victims.add(p.pid);
  for (const pid of victims) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  const recs = [...stale.values()];
  const names = [...new Set(recs.map((r) => r.server))].join(', ');
  const owners = [...new Set(recs.map((r) => r.owner))].join(', ');
  if (victims.size) log.warn(`MCP: killed ${victims.size} processes that servers ${names} of a pinclaw that did not stop (pid ${owners}) left running`);
  for (const rec of recs) rmSync(join(dir, `${rec.token}.json`), { force: true });
  return victims.size;
}
