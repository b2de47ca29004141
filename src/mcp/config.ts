// The checks of mcp.servers the schema cannot express (part of the MCP client's lazy chunk: the
// config checks import it only when mcp.servers is set).
import type { PinclawConfig } from '../config/schema.js';
import { ConfigError } from '../errors.js';

/** Throws a ConfigError (exit 78) naming each server that is neither stdio nor HTTP, or both. */
export function checkMcpConfig(config: PinclawConfig): void {
  const problems: string[] = [];
  for (const [name, s] of Object.entries(config.mcp.servers)) {
    const at = `mcp.servers.${name}`;
    if (s.command === undefined && s.url === undefined) problems.push(`${at}: set command (a stdio server) or url (a Streamable HTTP server)`);
    else if (s.command !== undefined && s.url !== undefined) problems.push(`${at}: set command (stdio) or url (Streamable HTTP), not both`);
    else if (s.command !== undefined && s.command.trim() === '') problems.push(`${at}.command: empty; the program to start`);
    if (s.url !== undefined) {
      let u: URL | undefined;
      try {
        u = new URL(s.url);
      } catch {
        // reported below
      }
      if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) problems.push(`${at}.url: expected an http:// or https:// URL, found ${JSON.stringify(s.url)}`);
      if (Object.keys(s.env).length || s.args.length || s.cwd !== undefined) problems.push(`${at}: env, args and cwd are for stdio servers (command); an HTTP server takes headers`);
    }
    if (s.command !== undefined && Object.keys(s.headers).length) problems.push(`${at}.headers: for HTTP servers (url); a stdio server takes env`);
    for (const p of [...s.paths, ...s.writePaths]) if (!p.startsWith('/')) problems.push(`${at}: '${p}' in paths/writePaths is not an absolute path`);
  }
  if (problems.length) throw new ConfigError(problems.join('\n'));
}
