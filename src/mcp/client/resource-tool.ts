// `<server>__read_resource`: how the model reaches an MCP server's resources. One tool per server
// that offers resources, rather than a pair of generic tools (list_resources, read_resource with
// a server argument), because:
//  - the prompt stays small: one short schema per such server, its description naming only the
//    first few resources (MAX_DESCRIPTION_CHARS); the whole list is one call away (no `uri`);
//  - the policy grants it exactly as the server's tools: `<server>__*` in an allow list covers it,
//    outside the owner's chats it is denied by default (mcpServer is set), `tools.deny` can name it.
// What it reads reaches the model capped at maxResultBytes and framed as untrusted data.
import type { Tool } from '../../tools/types.js';
import type { McpServerConfig } from '../types.js';
import type { RemoteResource, RemoteResourceTemplate, ResourceContents } from './catalog.js';
import { resourceText } from './result.js';
import { defineTool } from '../../tools/define.js';

/** The most characters of resource names the description carries; a long list is cut with a count. */
const MAX_DESCRIPTION_CHARS = 400;

export interface ResourceToolOptions {
  server: string;
  name: string;
  config: McpServerConfig;
  list: readonly RemoteResource[];
  templates: readonly RemoteResourceTemplate[];
  read(uri: string, signal?: AbortSignal): Promise<ResourceContents[]>;
}

function summary(list: readonly RemoteResource[], templates: readonly RemoteResourceTemplate[]): string {
  const items = [...list.map((r) => r.uri), ...templates.map((t) => t.uriTemplate)];
  if (!items.length) return 'It lists none now; call without uri to list them again.';
  const shown: string[] = [];
  let chars = 0;
  for (const item of items) {
    if (chars + item.length > MAX_DESCRIPTION_CHARS && shown.length) break;
    shown.push(item);
    chars += item.length + 2;
  }
  const more = items.length - shown.length;
  return `Some: ${shown.join(', ')}${more ? `, and ${more} more (call without uri for all)` : ''}. Fill a template's {variables} to read it.`;
}

/** The full list as the model gets it when it calls without a uri. */
function listing(list: readonly RemoteResource[], templates: readonly RemoteResourceTemplate[]): string {
  const lines = list.map((r) => `${r.uri}  ${r.title ?? r.name}${r.mimeType ? ` (${r.mimeType})` : ''}${r.description ? `: ${r.description.split('\n')[0]}` : ''}`);
  for (const t of templates) lines.push(`${t.uriTemplate}  (template) ${t.title ?? t.name}${t.description ? `: ${t.description.split('\n')[0]}` : ''}`);
  return lines.join('\n') || 'no resources';
}

export function resourceTool(o: ResourceToolOptions): Tool {
  const { server, config } = o;
  return defineTool({
    name: o.name,
    description: `[MCP server ${server}] Reads one of this server's resources by URI; without uri, lists them all. ${summary(o.list, o.templates)}`,
    inputSchema: {
      type: 'object',
      properties: { uri: { type: 'string', description: 'the resource URI (a listed one, or a template filled in)' } },
      additionalProperties: false,
    },
    mcpServer: server,
    timeoutMs: config.callTimeoutMs + config.listTimeoutMs,
    maxOutputBytes: config.maxResultBytes + 1024,
    async execute({ uri }, ctx) {
      if (uri === undefined) return { content: resourceText(server, 'list', [{ uri: 'list', text: listing(o.list, o.templates) }], config.maxResultBytes) };
      try {
        return { content: resourceText(server, uri, await o.read(uri, ctx.signal), config.maxResultBytes) };
      } catch (err) {
        const msg = err instanceof Error ? err.message : String(err);
        return { content: msg.startsWith('MCP server') ? msg : `MCP server ${server}: ${msg}`, isError: true };
      }
    },
  });
}
