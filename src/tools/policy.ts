// The tool policy: which tool may run where, and which must ask the owner first. Decisions are data
// naming the rule that made them, so a refusal tells the model (and `pinclaw audit`) what to change.
//
// Order: a deny anywhere that applies wins; otherwise the most specific layer with an opinion
// decides (chat override > channel override > tools), where an opinion is an allow list naming the
// tool or a profile. Input-dependent rules (another chat) and confirmation come after.
import type { PinclawConfig } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import { chatScopes } from '../chat-scope.js';
import { HA_CHANNEL, HA_CHAT, LEGACY_HA_CHANNEL, LEGACY_HA_CHAT } from '../internal-chats.js';
import type { Tool, ToolContext } from './types.js';

export type ToolsSettings = PinclawConfig['tools'];
export type Profile = ToolsSettings['profile'];

export const PROFILES: readonly Profile[] = ['minimal', 'standard', 'full'];

/**
 * Tools each profile allows by name. minimal reads and changes nothing outside pinclaw; standard adds
 * everyday work (files in the workspace, the web, messages); full allows every tool, also those not
 * listed here, so a tool added later is denied by minimal and standard until it is named.
 */
const MINIMAL = ['current_time', 'read_file', 'list_dir', 'glob', 'grep', 'memory_search', 'memory_get', 'board_info', 'cron_list', 'sensor_read'];
// The physical-action tools (gpio_write, i2c_write) are here too, but outside the owner's chats
// each call needs the owner's yes (see confirmation below).
const STANDARD = [
  ...MINIMAL, 'write_file', 'edit_file', 'web_fetch', 'web_search', 'send_message', 'memory_store', 'memory_forget',
  'cron_add', 'cron_remove', 'cron_pause', 'cron_resume',
  'gpio_read', 'gpio_watch', 'gpio_write', 'i2c_scan', 'i2c_read', 'i2c_write', 'camera_command', 'camera_snapshot',
  'mcu_info', 'mcu_call', 'serial_list', 'serial_read', 'serial_write',
  // A call on another board of the fleet: that board's own policy decides what runs there.
  'remote_tool',
];
export const PROFILE_TOOLS: Readonly<Record<Exclude<Profile, 'full'>, readonly string[]>> = { minimal: MINIMAL, standard: STANDARD };

/**
 * exec is in the standard profile whenever an OS sandbox (Landlock or bubblewrap) is in force, so the
 * agent can run commands out of the box inside it; without one it stays opt-in (tools.allow), since
 * it would run them unconfined. The caller states which (src/sandbox/detect.ts execSandbox).
 */
export interface PolicyOptions {
  /** undefined: not known (tests of other rules): exec stays out of standard */
  execSandbox?: { inForce: true } | { inForce: false; reason: string };
  /** the clock the age of a message is measured by (ms since the epoch); default Date.now */
  now?: () => number;
}

/** A physical action asked for by a message older than tools.physicalMaxAgeSeconds. */
export interface Expired {
  ageSeconds: number;
  maxSeconds: number;
  /** the confirmation rule, as audit rows and refusals name it */
  rule: string;
}

export type Decision =
  | { allowed: true; rule: string }
  | { allowed: false; rule: string; reason: string };

export interface Policy {
  /** Whether the tool may run in this context, judged by name (what `specs` and `tool list` show). */
  check(tool: Tool, ctx: ToolContext): Decision;
  /** The rules that need the validated input: acting on another chat. */
  checkInput(tool: Tool, input: unknown, ctx: ToolContext): Decision;
  /** The rule that makes this tool ask the owner first in this context, or undefined. */
  confirmation(tool: Tool, ctx?: ToolContext): string | undefined;
  /**
   * Whether the message behind this call is too old for a physical action to run on it unconfirmed
   * (a turn retried after a provider error, a message left pending over a restart): "turn on the
   * heater" must not act an hour later without the owner's fresh yes.
   */
  expired(tool: Tool, ctx?: ToolContext): Expired | undefined;
}

interface Layer {
  /** config path of the layer, e.g. "tools" or "tools.overrides[2]" */
  path: string;
  /** how a refusal names it, e.g. "channel telegram override" */
  label: string;
  profile?: Profile;
  allow: readonly string[];
  deny: readonly string[];
}

/** An entry names the tool exactly, by `*` (all), or by a server's prefix (`home__*`: every tool of MCP server home). */
const names = (list: readonly string[], tool: string) =>
  list.includes(tool) || list.includes('*') || list.some((e) => e.length > 3 && e.endsWith('__*') && tool.startsWith(e.slice(0, -1)));

function inProfile(profile: Profile, tool: string, o: PolicyOptions): boolean {
  if (tool === 'exec' && profile === 'standard') return o.execSandbox?.inForce === true;
  return profile === 'full' || PROFILE_TOOLS[profile].includes(tool);
}

/** "telegram:42" → the chat; the chat id may itself contain ':'. */
function parseChat(entry: string, where: string): { channel: string; chatId: string } {
  const i = entry.indexOf(':');
  if (i <= 0 || i === entry.length - 1) throw new ConfigError(`${where}: expected "channel:chatId", found ${JSON.stringify(entry)}`);
  return { channel: entry.slice(0, i), chatId: entry.slice(i + 1) };
}

/** Checks what the schema cannot express (required fields inside lists); a ConfigError exits 78. */
function checkSettings(s: ToolsSettings): void {
  s.overrides.forEach((o, i) => {
    if (!o.channel) throw new ConfigError(`tools.overrides[${i}].channel: required (the channel the override applies to)`);
  });
  s.controlChats.forEach((c, i) => parseChat(c, `tools.controlChats[${i}]`));
}

/** A chat as the owner wrote it, with the old name of Home Assistant's commands read as the new one. */
function currentChat(channel: string, chatId: string): { channel: string; chatId: string } {
  return channel === LEGACY_HA_CHANNEL && chatId === LEGACY_HA_CHAT ? { channel: HA_CHANNEL, chatId: HA_CHAT } : { channel, chatId };
}

/**
 * What of the tool settings still uses an old internal chat name, each with the new name: kept in
 * force as meant (Home Assistant's commands), never handed to a chat, and said at start.
 */
export function legacyChatNames(s: Pick<ToolsSettings, 'controlChats' | 'overrides'>): string[] {
  const legacy = `${LEGACY_HA_CHANNEL}:${LEGACY_HA_CHAT}`;
  const now = `${HA_CHANNEL}:${HA_CHAT}`;
  const notes: string[] = [];
  s.controlChats.forEach((c, i) => {
    if (c === legacy) notes.push(`tools.controlChats[${i}] "${legacy}" is the old name of Home Assistant's commands, read as "${now}" (an MQTT chat can no longer use it); rename it: pinclaw config set tools.controlChats '${JSON.stringify(s.controlChats.map((x) => (x === legacy ? now : x)))}'`);
  });
  s.overrides.forEach((x, i) => {
    if (x.channel === LEGACY_HA_CHANNEL && x.chat === LEGACY_HA_CHAT) notes.push(`tools.overrides[${i}] (channel mqtt, chat homeassistant) applies to Home Assistant's commands, which now run as channel ${HA_CHANNEL}, chat ${HA_CHAT}; rename its channel and chat to those`);
    else if (x.channel === LEGACY_HA_CHANNEL && x.chat === undefined && !s.overrides.some((y) => y.channel === HA_CHANNEL)) notes.push(`tools.overrides[${i}] (channel mqtt) still applies to Home Assistant's commands as before, though they run as channel ${HA_CHANNEL} now; an override with "channel":"${HA_CHANNEL}" takes its place for them`);
  });
  return notes;
}

/** The check behind Policy.expired: a physical tool, a known receipt time, older than the limit. */
function expiredAt(tool: Tool, ctx: ToolContext | undefined, maxSeconds: number, now: number): Expired | undefined {
  if (!tool.physical || ctx?.receivedAt === undefined) return undefined;
  const ageMs = now - ctx.receivedAt;
  if (ageMs <= maxSeconds * 1000) return undefined;
  const ageSeconds = Math.floor(ageMs / 1000);
  return { ageSeconds, maxSeconds, rule: `tools.physicalMaxAgeSeconds (the message is ${ageSeconds} s old, more than ${maxSeconds} s)` };
}

export function createPolicy(s: ToolsSettings, o: PolicyOptions = {}): Policy {
  checkSettings(s);
  const now = o.now ?? Date.now;
  const control = new Set(s.controlChats.map((c) => {
    const parsed = parseChat(c, 'tools.controlChats');
    const { channel, chatId } = currentChat(parsed.channel, parsed.chatId);
    return `${channel}:${chatId}`;
  }));
  // An owner's channel-wide mqtt override was written when Home Assistant's commands ran on channel
  // mqtt: it keeps applying to them until the owner writes one for channel homeassistant.
  const haHasOwn = s.overrides.some((x) => x.channel === HA_CHANNEL);

  /** One of the owner's chats: listed in tools.controlChats, or a forum topic of a listed group. */
  const isControl = (ctx: Pick<ToolContext, 'channel' | 'chatId'>) => chatScopes(ctx.channel, ctx.chatId).some((id) => control.has(`${ctx.channel}:${id}`));

  /** Least specific first: the tools section, channel overrides, then chat overrides. */
  function layers(ctx: ToolContext): Layer[] {
    const scopes = chatScopes(ctx.channel, ctx.chatId);
    const out: Layer[] = [{ path: 'tools', label: 'tools', profile: s.profile, allow: s.allow, deny: s.deny }];
    const channel: Layer[] = [];
    const chat: (Layer & { scope: number })[] = [];
    s.overrides.forEach((o, i) => {
      const at = currentChat(o.channel ?? '', o.chat ?? '');
      const legacyChannel = o.chat === undefined && o.channel === LEGACY_HA_CHANNEL && ctx.channel === HA_CHANNEL && !haHasOwn;
      if (at.channel !== ctx.channel && !legacyChannel) return;
      if (o.chat === undefined) channel.push({ path: `tools.overrides[${i}]`, label: `channel ${o.channel} override`, profile: o.profile, allow: o.allow, deny: o.deny });
      else if (scopes.includes(at.chatId)) chat.push({ path: `tools.overrides[${i}]`, label: `chat ${o.channel}:${o.chat} override`, profile: o.profile, allow: o.allow, deny: o.deny, scope: scopes.indexOf(at.chatId) });
    });
    // A forum group's override before its topic's: the topic's is the more specific.
    chat.sort((a, b) => b.scope - a.scope);
    return [...out, ...channel, ...chat];
  }

  /**
   * An MCP server's tool: an outside party's code, so no profile grants it by itself. An allow list
   * naming it (or `server__*`) does; otherwise it runs only in the owner's own chats (the CLI and
   * tools.controlChats), and not there either under profile minimal (which changes nothing outside).
   */
  function checkMcp(tool: Tool, server: string, applicable: Layer[], ctx: ToolContext): Decision {
    for (const l of [...applicable].reverse()) {
      if (names(l.allow, tool.name)) return { allowed: true, rule: `${l.path}.allow` };
    }
    const profiled = [...applicable].reverse().find((l) => l.profile);
    if (profiled?.profile === 'minimal') {
      const rule = profiled.path === 'tools' ? 'tools.profile' : `${profiled.path}.profile`;
      return { allowed: false, rule: `${rule} minimal`, reason: `profile minimal allows no MCP server's tools; add ${server}__* to tools.allow to allow them` };
    }
    if (ctx.channel === 'cli' || isControl(ctx)) return { allowed: true, rule: "MCP in the owner's chats" };
    return {
      allowed: false,
      rule: 'mcp: owner\'s chats only',
      reason: `tools of MCP server ${server} run only in the owner's chats (the CLI and tools.controlChats), and ${ctx.channel}:${ctx.chatId} is not one; add ${server}__* (or ${tool.name}) to tools.allow, or to the allow of a tools.overrides entry for this channel or chat, to allow them here`,
    };
  }

  return {
    check(tool, ctx) {
      const applicable = layers(ctx);
      for (const l of applicable) {
        if (!names(l.deny, tool.name)) continue;
        return l.path === 'tools'
          ? { allowed: false, rule: 'tools.deny', reason: 'denied by tools.deny' }
          : { allowed: false, rule: `${l.path}.deny`, reason: `${l.label} denies ${tool.name} (${l.path}.deny)` };
      }
      if (tool.mcpServer !== undefined) return checkMcp(tool, tool.mcpServer, applicable, ctx);
      for (const l of [...applicable].reverse()) {
        if (names(l.allow, tool.name)) return { allowed: true, rule: `${l.path}.allow` };
        if (!l.profile) continue;
        const rule = l.path === 'tools' ? 'tools.profile' : `${l.path}.profile`;
        if (inProfile(l.profile, tool.name, o)) return { allowed: true, rule: `${rule} ${l.profile}${tool.name === 'exec' && l.profile === 'standard' ? ' (sandboxed)' : ''}` };
        const where = l.path === 'tools' ? '' : ` (set by the ${l.label}, ${l.path}.profile)`;
        if (tool.name === 'exec' && l.profile === 'standard') {
          const why = o.execSandbox && !o.execSandbox.inForce ? o.execSandbox.reason : 'no OS sandbox is known to be in force';
          return { allowed: false, rule: `${rule} ${l.profile}`, reason: `exec is in profile standard only inside an OS sandbox, and ${why}${where}; add it to tools.allow to allow it anyway` };
        }
        return { allowed: false, rule: `${rule} ${l.profile}`, reason: `not in profile ${l.profile}${where}; add it to tools.allow to allow it` };
      }
      // Unreachable: the tools layer always has a profile.
      return { allowed: false, rule: 'tools.profile', reason: 'no profile applies' };
    },

    checkInput(tool, input, ctx) {
      const target = tool.targetChat?.(input);
      if (!target || (target.channel === ctx.channel && target.chatId === ctx.chatId)) return { allowed: true, rule: 'own chat' };
      if (isControl(ctx)) return { allowed: true, rule: 'tools.controlChats' };
      return {
        allowed: false,
        rule: 'tools.controlChats',
        reason: `${tool.name} to another chat (${target.channel}:${target.chatId}) is allowed only from a control chat, and ${ctx.channel}:${ctx.chatId} is not one (tools.controlChats)`,
      };
    },

    expired: (tool, ctx) => expiredAt(tool, ctx, s.physicalMaxAgeSeconds, now()),

    confirmation(tool, ctx) {
      // First: of all the reasons to ask, a message too old to act on is the one the owner must hear.
      const late = expiredAt(tool, ctx, s.physicalMaxAgeSeconds, now());
      if (late) return late.rule;
      if (s.confirm.includes(tool.name)) return 'tools.confirm';
      if (tool.requiresConfirmation) return `${tool.name}.requiresConfirmation`;
      // A turn a hardware trigger started runs in the owner's chat when its session is that chat (by
      // default, owner.notify): the chat is the owner's, the request is not. An edge on a wire must
      // not switch anything unasked; the owner is asked in the chat (the hardware channel cannot ask,
      // so there it is refused unless that chat is a control chat, as before).
      if (tool.physical && ctx?.caller === 'hardware' && ctx.channel !== 'hardware') return 'physical action in a turn a hardware trigger started';
      // The CLI is the owner at the device; a control chat is one the owner declared theirs.
      if (tool.physical && ctx && ctx.channel !== 'cli' && !isControl(ctx)) return 'physical action outside the owner\'s chats (tools.controlChats)';
      // A camera sees whoever is in the room: only the owner's own chats take a picture unasked.
      if (tool.privacy && ctx && ctx.channel !== 'cli' && !isControl(ctx)) return 'privacy action outside the owner\'s chats (tools.controlChats)';
      return undefined;
    },
  };
}

/** Allows everything, asks for nothing: for plain tool sets and tests that are not about policy. */
export const openPolicy: Policy = {
  check: () => ({ allowed: true, rule: 'no policy' }),
  checkInput: () => ({ allowed: true, rule: 'no policy' }),
  confirmation: (tool) => (tool.requiresConfirmation ? `${tool.name}.requiresConfirmation` : undefined),
  expired: () => undefined,
};
