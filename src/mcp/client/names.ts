// The names MCP tools get in pinclaw: `<server>__<tool>`, of letters, digits, _ and -, starting with
// a letter, at most 64 characters (what model APIs accept), the rules OpenClaw uses so that
// prompts written for it carry over. Characters outside the set become _, a long name is cut, and
// a name taken already (by a built-in, or by another tool of the same cut) gets a suffix from a
// hash of the server and the tool's own name: the same config always gives the same names.
import { createHash } from 'node:crypto';

const MAX = 64;

function sanitize(s: string): string {
  return s.replace(/[^A-Za-z0-9_-]/g, '_');
}

function suffix(server: string, tool: string): string {
  return createHash('sha256').update(`${server}\0${tool}`).digest('hex').slice(0, 6);
}

/**
 * Names for one server's tools, in the order given; `taken` holds the names in use (built-ins and
 * other servers' tools) and receives the new ones.
 */
export function toolNames(server: string, tools: readonly string[], taken: Set<string>): string[] {
  const prefix = /^[A-Za-z]/.test(server) ? sanitize(server) : `m${sanitize(server)}`;
  return tools.map((tool) => {
    let name = `${prefix}__${sanitize(tool)}`.slice(0, MAX);
    if (taken.has(name)) name = `${name.slice(0, MAX - 7)}_${suffix(server, tool)}`;
    // A second collision (a hash prefix shared): count up, still deterministic for one order.
    for (let i = 2; taken.has(name); i++) name = `${name.slice(0, MAX - 7 - String(i).length)}_${suffix(server, tool)}${i}`;
    taken.add(name);
    return name;
  });
}
