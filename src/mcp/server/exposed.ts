// Which of the registry's tools an MCP client sees, and the one path its calls take: the registry
// (policy as channel mcp, limits, redaction, audit), after mcp.serve.tools. A call of a tool the
// owner did not expose is refused and audited like a policy refusal, so `pinclaw audit` shows every
// attempt an MCP client made.
import { errorMessage } from '../../errors.js';
import { log } from '../../log.js';
import type { NewAudit } from '../../store/audit.js';
import type { Registry } from '../../tools/registry.js';
import type { Tool, ToolContext } from '../../tools/types.js';

/**
 * The context of every MCP call. The peer is whoever can start `pinclaw mcp serve` (ssh as the
 * board's user), but the config decides what it may do, exactly as for a chat: a fixed chat id, so
 * the client cannot pick one that names a control chat; no confirm, since asking needs a channel
 * back to the owner (MCP elicitation is not offered), so a tool that must ask is refused with why.
 */
export const MCP_CHANNEL = 'mcp';
export const MCP_CHAT = 'stdio';
export const MCP_SESSION = 'mcp:stdio';
export const MCP_CALLER = 'mcp-client';

/** The rule an audit row of a call to a tool outside mcp.serve.tools names. */
export const SERVE_TOOLS_RULE = 'mcp.serve.tools';

export interface ExposedTools {
  /** the tools to list: exposed, allowed by policy as channel mcp, and able to run on this machine */
  list(): Tool[];
  /** undefined: no such tool in the registry (a protocol error); else the call's outcome */
  call(name: string, input: unknown, signal: AbortSignal): Promise<{ text: string; isError: boolean } | undefined>;
}

export interface ExposedDeps {
  registry: Registry;
  /** mcp.serve.tools; undefined: the read-only tools */
  names: readonly string[] | undefined;
  /** writes the audit row of a refused call (the registry's sink does so for the calls it judges) */
  audit(row: NewAudit): void;
  redact(text: string): string;
  now?: () => number;
}

const baseContext: ToolContext = { sessionKey: MCP_SESSION, channel: MCP_CHANNEL, chatId: MCP_CHAT, caller: MCP_CALLER };

/**
 * Read-only to the audit, not to the world: remote_tool runs a call on another board of the fleet
 * (that board audits it), which may be any tool there. Served only when mcp.serve.tools names it.
 */
const NOT_SERVED_BY_DEFAULT = new Set(['remote_tool']);

/** What mcp.serve.tools unset serves: the tools that change nothing. */
export const servedByDefault = (t: Tool) => t.readOnly === true && !NOT_SERVED_BY_DEFAULT.has(t.name);

export function exposedTools(d: ExposedDeps): ExposedTools {
  const now = d.now ?? Date.now;
  const isExposed = (t: Tool) => (d.names === undefined ? servedByDefault(t) : d.names.includes(t.name) || d.names.includes('*'));
  const known = (name: string) => d.registry.list(baseContext).find((l) => l.tool.name === name);
  // Tools that touch shared state (hardware, files) run one at a time, as in a turn.
  let sequential: Promise<unknown> = Promise.resolve();

  return {
    list: () => d.registry.list(baseContext)
      .filter((l) => isExposed(l.tool) && l.decision.allowed && l.unavailable === undefined)
      .map((l) => l.tool),

    async call(name, input, signal) {
      const listed = known(name);
      /** The row of a call stopped here, before the registry: as the registry writes its refusals. */
      const record = (outcome: 'denied' | 'error', detail: string, rule?: string) => {
        try {
          let shown: string;
          try {
            shown = d.redact(JSON.stringify(input) ?? 'null').slice(0, 4096);
          } catch {
            shown = '(not JSON)';
          }
          d.audit({ at: now(), sessionKey: MCP_SESSION, channel: MCP_CHANNEL, chatId: MCP_CHAT, caller: MCP_CALLER, tool: name, input: shown, outcome, rule, detail, durationMs: 0, outputBytes: 0 });
        } catch (err) {
          log.warn(`audit: cannot record the refused MCP call of ${name}: ${errorMessage(err)}`);
        }
      };
      if (!listed) {
        record('error', `unknown tool '${name}'`);
        return undefined;
      }
      if (!isExposed(listed.tool)) {
        const why = d.names === undefined
          ? `${name} is not served by default (mcp.serve.tools is unset: only the read-only tools are served); add it: pinclaw config set mcp.serve.tools '["${name}"]' (with the others you want)`
          : `${name} is not in mcp.serve.tools; add it there to serve it`;
        const text = `${name} refused: ${why}`;
        record('denied', text, SERVE_TOOLS_RULE);
        return { text, isError: true };
      }
      const run = () => d.registry.call({ name, input }, { ...baseContext, signal });
      let report;
      if (listed.tool.sequential) {
        const turn = sequential.then(run, run);
        sequential = turn.catch(() => undefined);
        report = await turn;
      } else report = await run();
      return { text: report.result.content, isError: report.result.isError === true };
    },
  };
}
