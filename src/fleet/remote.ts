// Remote tools between the boards of a fleet: `remote_tool {node, tool, input}` on the caller, and
// the fleet server on the callee that runs exposed tools through its own governed registry.
//
// Protocol (version 1; the message shapes and the signature are in fleet-sign.ts):
//   caller → <base>/<callee>/fleet/req  QoS 1  {v, id, from, to, tool, input, at, exp, rcv?, sig}
//   callee → <base>/<caller>/fleet/res  QoS 1  {v, id, from, to, ok, code?, content, isError, at, sig?}
// `id` is a random UUID that correlates the answer; `at` is the sender's clock and `exp` the moment
// the caller stops waiting (at + mqtt.fleet.timeoutMs); `rcv`, when the turn answers a message, when
// that message was received: the callee holds physical tools to tools.physicalMaxAgeSeconds by it.
//
// Keys: a caller signs with its own mqtt.fleet.key. The callee verifies with its own mqtt.fleet.key
// when mqtt.fleet.callers is empty (a shared-key fleet), else with the key listed for the calling
// node (per-node keys; an unlisted node is refused). An answer is signed with the key that verified
// the call: in both modes that is the caller's own mqtt.fleet.key, so the caller checks every answer
// with the one key it holds. A refusal the callee cannot sign (no key, unknown caller) goes out
// unsigned; the caller then shows only its reason code, never its text.
//
// The callee refuses, with a denied audit row and an answer, before any tool runs: no key here, an
// unknown caller, a signature that does not verify, a call from the future (clocks more than 30 s
// apart), older than the 2-minute window, past its `exp` (the caller gave up; a QoS 1 call queued for
// an offline board must not switch a relay minutes later), an id seen within the window (replay), a
// tool not in mqtt.fleet.expose. What passes runs through the registry as channel `fleet`, chat
// `<caller>`, so this node's policy decides (tools.overrides for channel fleet, and physical tools
// only when `fleet:<caller>` is in tools.controlChats); the registry audits it like any call.
import { randomUUID } from 'node:crypto';
import type { MqttLink, MqttSettings } from '../mqtt/connection.js';
import type { Logger } from '../log.js';
import { errorMessage } from '../errors.js';
import { log as defaultLog } from '../log.js';
import { insertAudit } from '../store/audit.js';
import type { Db } from '../store/db.js';
import { fleetCallsSince, forgetFleetCalls, rememberFleetCall } from '../store/fleet-seen.js';
import { flushWritesSoon, writeSoon } from '../store/write-soon.js';
import { defineTool } from '../tools/define.js';
import { refusalBook } from './refusals.js';
import type { Tool, ToolCall, ToolContext, ToolResult } from '../tools/types.js';
import {
  NODE_NAME, parseRequest, parseResponse, requestText, responseText, signRequest, signResponse, verify,
  type FleetRequest, type FleetResponse, type RefusalCode,
} from './fleet-sign.js';

/** A call older than this is refused, and ids are remembered this long (plus the skew, in SQLite: across restarts) to refuse replays. */
export const FLEET_WINDOW_MS = 120_000;
/** How far ahead of this node's clock a call's `at` may be. */
export const CLOCK_SKEW_MS = 30_000;
/** How often the ids older than the window are deleted: not on every call, whose path the insert already is on. */
const PRUNE_EVERY_MS = 10_000;
/** A call arriving this long after its `exp` is refused: the caller has already answered its turn. */
const EXPIRY_GRACE_MS = 2_000;
/** Longest input text kept in a refusal's audit row (as the registry does). */
const MAX_AUDIT_INPUT = 4096;

const REQ = 'fleet/req';
const RES = 'fleet/res';

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(1))} s`;

/** What a refusal code means, in the caller's words: shown when the refusal's own text cannot be trusted. */
const REASONS: Record<RefusalCode, string> = {
  'no-key': 'it has no mqtt.fleet.key and answers no calls',
  'unknown-caller': 'this node is not in its mqtt.fleet.callers',
  'bad-signature': "the call's signature does not verify with the key it holds for this node (mqtt.fleet.key here and there, or its mqtt.fleet.callers entry, differ)",
  stale: 'the call was too old when it arrived (the clocks of the two boards may differ; check NTP)',
  clock: "the call's time is ahead of its clock (the clocks of the two boards differ; check NTP)",
  expired: 'the call arrived after this node had stopped waiting',
  replay: 'the call id was already used',
  'not-exposed': 'the tool is not in its mqtt.fleet.expose',
  malformed: 'it could not read the call',
};

export interface RemoteToolOptions {
  /** the gateway's link; throws until the gateway has opened it */
  link: () => MqttLink;
  nodeId: string;
  settings: MqttSettings;
  now?: () => number;
  log?: Logger;
}

type Outcome = { kind: 'answer'; res: FleetResponse; verified: boolean } | { kind: 'failed'; message: string };

interface Pending {
  node: string;
  settle(o: Outcome): void;
}

export interface RemoteTool {
  tool: Tool;
  /** Subscribes the answers and the nodes' status; call right after the link is opened. Returns the stop. */
  start(): () => void;
  /** the last status (online, offline) each node published, for diagnostics */
  nodes(): ReadonlyMap<string, string>;
}

export function remoteTool(o: RemoteToolOptions): RemoteTool {
  const fleet = o.settings.fleet;
  const now = o.now ?? Date.now;
  const log = o.log ?? defaultLog;
  const pending = new Map<string, Pending>();
  /** the last status each node published (retained: known as soon as we subscribe) */
  const statuses = new Map<string, string>();
  let started = false;

  function onResponse(payload: Buffer): void {
    const res = parseResponse(payload);
    if (!res) return log.warn('mqtt fleet: dropped an answer that is not a fleet response');
    if (res.to !== o.nodeId) return;
    const p = pending.get(res.id);
    // A late answer (the call timed out) or a replayed one: its call is no longer waiting.
    if (!p) return log.debug(`mqtt fleet: an answer from ${res.from} for a call no longer waiting (${res.id})`);
    if (res.from !== p.node) return log.warn(`mqtt fleet: dropped an answer for a call to ${p.node} that claims to come from ${res.from}`);
    const verified = !!fleet.key && verify(fleet.key, responseText(res), res.sig);
    // An unverified result could be anyone's words: only a refusal may end the call unverified, and
    // then only its code is shown. A forged success is dropped and the real answer still awaited.
    if (!verified && res.ok) return log.warn(`mqtt fleet: dropped an answer from ${p.node} whose signature does not verify`);
    p.settle({ kind: 'answer', res, verified });
  }

  function statusOf(node: string): string {
    const s = statuses.get(node);
    if (s !== undefined) return s === 'online' ? `its status is online, so the call may still be running there (mqtt.fleet.timeoutMs is ${fleet.timeoutMs} ms)` : `its status is ${s}`;
    const known = [...statuses].map(([n, st]) => `${n} (${st})`).join(', ');
    return `no node ${node} has published a status on this broker${known ? ` (known: ${known})` : ' (no node has)'}`;
  }

  function resultOf(node: string, tool: string, out: Outcome): ToolResult {
    if (out.kind === 'failed') return { content: out.message, isError: true };
    const { res, verified } = out;
    if (res.ok) return res.isError ? { content: `node ${node}: ${res.content}`, isError: true } : { content: res.content };
    const code = res.code && res.code in REASONS ? res.code : 'malformed';
    if (verified) return { content: `node ${node} refused ${tool}: ${res.content}`, isError: true };
    return { content: `node ${node} refused ${tool} (${code}): ${REASONS[code]}`, isError: true };
  }

  async function call(node: string, tool: string, input: unknown, ctx: ToolContext): Promise<ToolResult> {
    if (!fleet.key) return { content: 'remote_tool: this node has no mqtt.fleet.key, so it cannot sign calls; set one (pinclaw config set mqtt.fleet.key ...), the same as the called node holds', isError: true };
    let link: MqttLink;
    try {
      link = o.link();
    } catch (err) {
      return { content: `remote_tool: MQTT is not running here (${errorMessage(err)}); remote calls need the gateway with mqtt.url set`, isError: true };
    }
    if (!started) return { content: 'remote_tool: the fleet is not started yet; try again in a moment', isError: true };
    const at = now();
    // The age of the message behind the call goes along, signed: a late turn here must not act
    // physically there when it could not here (tools.physicalMaxAgeSeconds on the callee).
    const rcv = ctx.receivedAt;
    const req = signRequest(fleet.key, { v: 1, id: randomUUID(), from: o.nodeId, to: node, tool, input, at, exp: at + fleet.timeoutMs, ...(rcv !== undefined ? { rcv } : {}) });
    const signal = ctx.signal;
    // One settle for every way the call can end (answer, timeout, abort, failed publish): the first wins.
    const outcome = await new Promise<Outcome>((resolve) => {
      let done = false;
      const settle = (out: Outcome) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        pending.delete(req.id);
        resolve(out);
      };
      const onAbort = () => settle({ kind: 'failed', message: `remote_tool: the call of ${tool} on node ${node} was abandoned: ${signal?.reason instanceof Error ? signal.reason.message : 'the turn was aborted'}` });
      const timer = setTimeout(() => settle({ kind: 'failed', message: `node ${node} did not answer within ${seconds(fleet.timeoutMs)}; ${statusOf(node)}` }), fleet.timeoutMs);
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      // Registered before publishing: the answer can arrive before the broker's PUBACK does.
      pending.set(req.id, { node, settle });
      link.publish(link.topic(REQ, node), JSON.stringify(req), { qos: 1, timeoutMs: fleet.timeoutMs })
        .catch((err: unknown) => settle({ kind: 'failed', message: `remote_tool: cannot send the call to node ${node}: ${errorMessage(err)}` }));
    });
    return resultOf(node, tool, outcome);
  }

  const tool: Tool = defineTool({
    name: 'remote_tool',
    readOnly: true,
    description: 'Runs a tool on another pinclaw board of the fleet over MQTT (e.g. read a sensor or switch a relay there). That board decides what it allows: only the tools it exposes, under its own policy.',
    inputSchema: {
      type: 'object',
      properties: {
        node: { type: 'string', minLength: 1, maxLength: 64, description: "the other board's node id (its mqtt.nodeId)" },
        tool: { type: 'string', minLength: 1, maxLength: 64, description: 'the tool to run there, e.g. current_time or mcu_call' },
        input: { type: 'object', description: "that tool's input" },
      },
      required: ['node', 'tool'],
      additionalProperties: false,
    },
    // Hardware on the other board is shared state: one remote call at a time, in the model's order.
    sequential: true,
    // The registry's limit must not cut the call before its own timeout gives the clearer message.
    timeoutMs: fleet.timeoutMs + 5_000,
    async execute(raw, ctx) {
      const { node, tool: name, input = {} } = raw;
      if (!NODE_NAME.test(node)) return { content: `remote_tool: node ${JSON.stringify(node)} is not a node id (letters, digits, _ and -)`, isError: true };
      if (!/^[a-zA-Z0-9_-]{1,64}$/.test(name)) return { content: `remote_tool: tool ${JSON.stringify(name)} is not a tool name`, isError: true };
      if (name === 'remote_tool') return { content: 'remote_tool: calls do not hop from board to board; call the board that has the tool', isError: true };
      return call(node, name, input, ctx);
    },
  });

  return {
    tool,
    nodes: () => statuses,
    start() {
      const link = o.link();
      const offRes = link.subscribe(link.topic(RES), (_t, payload) => onResponse(payload));
      // `<base>/<node>/status` of every node, retained: whether a silent node is offline or busy.
      const prefix = `${link.baseTopic}/`;
      const offStatus = link.subscribe(`${link.baseTopic}/+/status`, (t, payload) => {
        const node = t.slice(prefix.length, -'/status'.length);
        const text = payload.toString('utf8').slice(0, 32);
        if (text) statuses.set(node, text);
        else statuses.delete(node);
      });
      started = true;
      return () => {
        started = false;
        offRes();
        offStatus();
        for (const p of [...pending.values()]) p.settle({ kind: 'failed', message: `remote_tool: the call to node ${p.node} was abandoned: MQTT is stopping` });
      };
    },
  };
}

export interface FleetServerOptions {
  link: MqttLink;
  db: Db;
  settings: MqttSettings;
  /** the registry's governed run (policy, limits, confirmation, audit, redaction) */
  runTool: (call: ToolCall, ctx: ToolContext) => Promise<ToolResult>;
  /** whether the tool changes nothing (its call's replay record may then be written after the answer) */
  readOnly?: (tool: string) => boolean;
  /** applied to the input of a refused call before its audit row (the registry redacts the others) */
  redact?: (text: string) => string;
  now?: () => number;
  log?: Logger;
}

/** Answers calls on `<base>/<nodeId>/fleet/req`; returns the stop. */
export function startFleetServer(o: FleetServerOptions): () => void {
  const { link, db } = o;
  const fleet = o.settings.fleet;
  const now = o.now ?? Date.now;
  const log = o.log ?? defaultLog;
  const expose = new Set(fleet.expose);
  const stopping = new AbortController();
  let prunedAt = -Infinity;
  const book = refusalBook({ db, nodeId: link.nodeId, now, log, onError: (err) => log.warn(`mqtt fleet: cannot record refused calls: ${errorMessage(err)}`) });

  function inputText(input: unknown): string {
    let s: string;
    try {
      s = JSON.stringify(input) ?? 'null';
    } catch {
      s = String(input);
    }
    if (o.redact) s = o.redact(s);
    return s.length > MAX_AUDIT_INPUT ? `${s.slice(0, MAX_AUDIT_INPUT)}… (${s.length} characters)` : s;
  }

  function answer(to: string, res: Omit<FleetResponse, 'sig' | 'v' | 'from' | 'to' | 'at'>, key: string | undefined): void {
    const body = { v: 1 as const, from: link.nodeId, to, at: now(), ...res };
    const msg = key ? signResponse(key, body) : body;
    link.publish(link.topic(RES, to), JSON.stringify(msg), { qos: 1, timeoutMs: 10_000 })
      .catch((err: unknown) => log.warn(`mqtt fleet: cannot answer ${to}'s call ${res.id}: ${errorMessage(err)}`));
  }

  /**
   * A call stopped before any tool: counted; while few, one denied audit row, a log line, and an answer
   * when there is someone to answer. Past refusals.ts's limit only a signed answer goes out (the
   * caller holds the key and waits for it); the rest is summed up at the interval's end.
   */
  function refuse(r: { id?: string; from: string; tool: string; input: unknown }, code: RefusalCode, rule: string, message: string, key: string | undefined): void {
    const from = NODE_NAME.test(r.from) ? r.from : '?';
    if (!book.note(code, from)) {
      if (key && r.id && from !== '?') answer(from, { id: r.id, ok: false, code, content: message, isError: true }, key);
      return;
    }
    try {
      insertAudit(db, {
        at: now(), sessionKey: `fleet:${from}`, channel: 'fleet', chatId: from, caller: from, tool: `remote:${r.tool}`,
        input: inputText(r.input), outcome: 'denied', rule, detail: message, durationMs: 0, outputBytes: 0,
      });
    } catch (err) {
      log.warn(`mqtt fleet: cannot record a refused call from ${from}: ${errorMessage(err)}`);
    }
    log.warn(`mqtt fleet: refused ${r.tool} for ${from}: ${message}`);
    if (r.id && from !== '?') answer(from, { id: r.id, ok: false, code, content: message, isError: true }, key);
  }

  /** The key that verifies this caller's calls, or the refusal. */
  function keyFor(from: string): { key: string; rule: string } | { code: RefusalCode; rule: string; message: string } {
    if (!fleet.key) return { code: 'no-key', rule: 'mqtt.fleet.key', message: `node ${link.nodeId} has no mqtt.fleet.key and answers no remote calls` };
    if (!fleet.callers.length) return { key: fleet.key, rule: 'mqtt.fleet.key' };
    const i = fleet.callers.findIndex((c) => c.node === from);
    const entry = fleet.callers[i];
    if (!entry?.key) return { code: 'unknown-caller', rule: 'mqtt.fleet.callers', message: `node ${from} is not in mqtt.fleet.callers of ${link.nodeId}` };
    return { key: entry.key, rule: `mqtt.fleet.callers[${i}].key` };
  }

  /**
   * Every call id of the window, by caller: those fleet_seen holds from before this server started
   * (a previous process, or a previous server of this one, whose held records are written first),
   * and every call received since, whose record may not be written yet (a read's: see remember).
   * So a read's replay check is a lookup here, not a SQLite query on every call. Pruned with the
   * table; as large as the calls of the window, which this map held anyway.
   */
  const recent = new Map<string, number>();
  flushWritesSoon(db);
  for (const c of fleetCallsSince(db, now() - FLEET_WINDOW_MS - CLOCK_SKEW_MS)) recent.set(`${c.caller}\n${c.call_id}`, c.at);

  /**
   * Records the call; false for a replay. A call that may change something is recorded in SQLite
   * before it runs (the insert is the check that counts for it). A read's record is written with its
   * audit row shortly after the answer (store/write-soon.ts), off the round trip; `recent` refuses
   * its replays meanwhile. Only a process killed in that moment forgets it; a replay of that read
   * after the restart runs it again, which changes nothing.
   */
  function remember(r: FleetRequest): boolean {
    const id = `${r.from}\n${r.id}`;
    if (recent.has(id)) return false;
    if (!o.readOnly?.(r.tool)) {
      if (!rememberFleetCall(db, r.from, r.id, r.at)) return false;
    } else {
      writeSoon(db, () => void rememberFleetCall(db, r.from, r.id, r.at), (err) => log.warn(`mqtt fleet: cannot record call ${r.id} of node ${r.from} (${errorMessage(err)})`));
    }
    recent.set(id, r.at);
    return true;
  }

  function onRequest(payload: Buffer, retain: boolean): void {
    if (retain) return log.warn(`mqtt fleet: ignored a retained message on ${link.topic(REQ)} (calls are never retained; clear it with an empty retained message)`);
    const r = parseRequest(payload);
    if (typeof r === 'string') {
      // What can be read of a bad call still names it in the audit row, and gets it an answer.
      const loose = looseFields(payload);
      return refuse({ id: loose.id, from: loose.from ?? '?', tool: loose.tool ?? '?', input: loose.input }, 'malformed', 'mqtt.fleet request', `the call is malformed: ${r}`, undefined);
    }
    if (r.to !== link.nodeId) return refuse(r, 'malformed', 'mqtt.fleet request', `the call is addressed to ${r.to}, this is ${link.nodeId}`, undefined);
    const k = keyFor(r.from);
    if ('code' in k) return refuse(r, k.code, k.rule, k.message, undefined);
    if (!verify(k.key, requestText(r), r.sig)) {
      return refuse(r, 'bad-signature', k.rule, `the signature of node ${r.from}'s call does not verify with ${k.rule} of ${link.nodeId}`, k.key);
    }
    const t = now();
    if (r.at > t + CLOCK_SKEW_MS) return refuse(r, 'clock', 'mqtt.fleet clock', `the call is dated ${seconds(r.at - t)} ahead of ${link.nodeId}'s clock (more than ${seconds(CLOCK_SKEW_MS)}: check NTP on both boards)`, k.key);
    if (t - r.at > FLEET_WINDOW_MS) return refuse(r, 'stale', 'mqtt.fleet window', `the call is ${seconds(t - r.at)} old (the limit is ${seconds(FLEET_WINDOW_MS)}); not run`, k.key);
    if (t > r.exp + EXPIRY_GRACE_MS) return refuse(r, 'expired', 'mqtt.fleet window', `the call arrived ${seconds(t - r.exp)} after node ${r.from} stopped waiting for it; not run`, k.key);
    // Anything dated before the window (and the skew) is refused as stale above, so its id may go.
    if (t - prunedAt >= PRUNE_EVERY_MS) {
      forgetFleetCalls(db, t - FLEET_WINDOW_MS - CLOCK_SKEW_MS);
      for (const [id, at] of recent) if (at < t - FLEET_WINDOW_MS - CLOCK_SKEW_MS) recent.delete(id);
      prunedAt = t;
    }
    if (!remember(r)) {
      return refuse(r, 'replay', 'mqtt.fleet replay', `call id ${r.id} of node ${r.from} was already received; a replay is not run`, k.key);
    }
    if (!expose.has(r.tool) || r.tool === 'remote_tool') {
      const list = [...expose].filter((x) => x !== 'remote_tool').join(', ') || 'none';
      return refuse(r, 'not-exposed', 'mqtt.fleet.expose', `${r.tool} is not exposed to the fleet by ${link.nodeId} (mqtt.fleet.expose: ${list})`, k.key);
    }
    void run(r, k.key);
  }

  async function run(r: FleetRequest, key: string): Promise<void> {
    // The message's receipt as the caller signed it, never after the call itself (a call from a
    // caller that does not send it counts from its own time): the registry then refuses a physical
    // tool for a message older than tools.physicalMaxAgeSeconds, as for a local turn, and says why.
    const receivedAt = Math.min(r.rcv ?? r.at, r.at);
    const ctx: ToolContext = { sessionKey: `fleet:${r.from}`, channel: 'fleet', chatId: r.from, caller: r.from, receivedAt, signal: stopping.signal };
    let result: ToolResult;
    try {
      result = await o.runTool({ name: r.tool, input: r.input }, ctx);
    } catch (err) {
      result = { content: `${r.tool} failed: ${errorMessage(err)}`, isError: true };
    }
    answer(r.from, { id: r.id, ok: true, content: result.content, isError: result.isError === true }, key);
  }

  const off = link.subscribe(link.topic(REQ), (_t, payload, info) => {
    try {
      onRequest(payload, info.retain);
    } catch (err) {
      log.error(`mqtt fleet: handling a call failed: ${errorMessage(err)}`);
    }
  });
  return () => {
    off();
    book.flush();
    stopping.abort(new Error(`node ${link.nodeId} is stopping`));
  };
}

/** id, from, tool and input of a call that failed the strict check, where they are readable. */
function looseFields(payload: Buffer): { id?: string; from?: string; tool?: string; input?: unknown } {
  try {
    const m: unknown = JSON.parse(payload.toString('utf8'));
    if (typeof m !== 'object' || m === null) return { input: payload.toString('utf8').slice(0, 200) };
    const r = m as Record<string, unknown>;
    const str = (v: unknown, re: RegExp) => (typeof v === 'string' && re.test(v) ? v : undefined);
    return { id: str(r.id, /^[A-Za-z0-9_-]{8,64}$/), from: str(r.from, NODE_NAME), tool: str(r.tool, /^[a-zA-Z0-9_-]{1,64}$/), input: r.input };
  } catch {
    return { input: payload.toString('utf8').slice(0, 200) };
  }
}
