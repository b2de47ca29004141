// A server's resources and prompts (MCP server features besides tools): resources/list,
// resources/templates/list and prompts/list page by page, resources/read and prompts/get. Each is
// asked only of a server whose initialize answer declared the capability, as the spec requires;
// one without it gets a plain "offers no resources". Field names as the spec's schema
// (2025-11-25) and the official SDK's spell them: Resource {uri, name, title, description,
// mimeType, size}, ResourceTemplate {uriTemplate, ...}, contents [{uri, mimeType, text | blob}],
// Prompt {name, title, description, arguments [{name, description, required}]},
// GetPromptResult {description, messages [{role, content}]}.
import type { JsonObject } from '../types.js';
import { MAX_PAGES, type McpConnection } from './connection.js';

export interface RemoteResource {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
}

export interface RemoteResourceTemplate {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
}

/** One element of resources/read's contents: text, or blob (base64) for binary data. */
export interface ResourceContents {
  uri: string;
  mimeType?: string;
  text?: string;
  blob?: string;
}

export interface PromptArgument {
  name: string;
  description?: string;
  required?: boolean;
}

export interface RemotePrompt {
  name: string;
  title?: string;
  description?: string;
  arguments: PromptArgument[];
}

export interface PromptMessage {
  role: string;
  content: unknown;
}

/** Entries kept from one list at most. */
const MAX_ENTRIES = 1000;

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** The optional string fields of `o` named in `keys`, those present. */
function strings<K extends string>(o: JsonObject, keys: readonly K[]): Partial<Record<K, string>> {
  const out: Partial<Record<K, string>> = {};
  for (const k of keys) {
    const v = str(o[k]);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

function need(conn: McpConnection, what: 'resources' | 'prompts'): void {
  if (!conn.handshake?.[what]) throw new Error(`MCP server ${conn.server} offers no ${what} (its initialize answer declares no ${what} capability)`);
}

/** Every entry of a paginated list, following nextCursor; `timeoutMs` bounds the whole listing. */
async function listAll<T>(conn: McpConnection, method: string, key: string, timeoutMs: number, parse: (item: JsonObject) => T | undefined): Promise<T[]> {
  const deadline = Date.now() + timeoutMs;
  const out: T[] = [];
  let cursor: string | undefined;
  const late = `MCP server ${conn.server}: no answer to ${method} within ${timeoutMs} ms (mcp.servers.${conn.server}.listTimeoutMs)`;
  for (let page = 0; page < MAX_PAGES; page++) {
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(late);
    const result = await conn.rpc.request(method, cursor === undefined ? undefined : { cursor }, left).catch((err: Error) => {
      throw new Error(err.message.includes(`within ${left} ms`) ? late : err.message);
    });
    if (!isObject(result) || !Array.isArray(result[key])) throw new Error(`MCP server ${conn.server}: its answer to ${method} has no ${key} array`);
    for (const item of result[key] as unknown[]) {
      const parsed = isObject(item) ? parse(item) : undefined;
      if (parsed !== undefined && out.length < MAX_ENTRIES) out.push(parsed);
    }
    cursor = typeof result.nextCursor === 'string' && result.nextCursor ? result.nextCursor : undefined;
    if (cursor === undefined) break;
  }
  return out;
}

export function listResources(conn: McpConnection, timeoutMs: number): Promise<RemoteResource[]> {
  need(conn, 'resources');
  return listAll(conn, 'resources/list', 'resources', timeoutMs, (r) => {
    const uri = str(r.uri);
    if (!uri) return undefined;
    return { uri, name: str(r.name) ?? uri, ...strings(r, ['title', 'description', 'mimeType'] as const), ...(typeof r.size === 'number' ? { size: r.size } : {}) };
  });
}

export function listResourceTemplates(conn: McpConnection, timeoutMs: number): Promise<RemoteResourceTemplate[]> {
  need(conn, 'resources');
  return listAll(conn, 'resources/templates/list', 'resourceTemplates', timeoutMs, (r) => {
    const uriTemplate = str(r.uriTemplate);
    if (!uriTemplate) return undefined;
    return { uriTemplate, name: str(r.name) ?? uriTemplate, ...strings(r, ['title', 'description', 'mimeType'] as const) };
  });
}

export async function readResource(conn: McpConnection, uri: string, timeoutMs: number, signal?: AbortSignal): Promise<ResourceContents[]> {
  need(conn, 'resources');
  const result = await conn.rpc.request('resources/read', { uri }, timeoutMs, signal).catch((err: Error) => {
    throw new Error(err.message.replace(/within (\d+) ms/, `within $1 ms (mcp.servers.${conn.server}.callTimeoutMs)`));
  });
  if (!isObject(result) || !Array.isArray(result.contents)) throw new Error(`MCP server ${conn.server}: its answer to resources/read ${uri} has no contents array`);
  return result.contents.filter(isObject).map((c) => ({ uri: str(c.uri) ?? uri, ...strings(c, ['mimeType', 'text', 'blob'] as const) }));
}

export function listPrompts(conn: McpConnection, timeoutMs: number): Promise<RemotePrompt[]> {
  need(conn, 'prompts');
  return listAll(conn, 'prompts/list', 'prompts', timeoutMs, (p) => {
    const name = str(p.name);
    if (!name) return undefined;
    const args = Array.isArray(p.arguments) ? p.arguments.filter(isObject) : [];
    return {
      name,
      ...strings(p, ['title', 'description'] as const),
      arguments: args.filter((a) => str(a.name)).map((a) => ({ name: str(a.name)!, ...strings(a, ['description'] as const), ...(a.required === true ? { required: true } : {}) })),
    };
  });
}

/** prompts/get: `args` are strings, as the spec's GetPromptRequest has them. */
export async function getPrompt(conn: McpConnection, name: string, args: Record<string, string>, timeoutMs: number): Promise<{ description?: string; messages: PromptMessage[] }> {
  need(conn, 'prompts');
  const result = await conn.rpc.request('prompts/get', { name, arguments: args }, timeoutMs).catch((err: Error) => {
    throw new Error(err.message.replace(/within (\d+) ms/, `within $1 ms (mcp.servers.${conn.server}.callTimeoutMs)`));
  });
  if (!isObject(result) || !Array.isArray(result.messages)) throw new Error(`MCP server ${conn.server}: its answer to prompts/get ${name} has no messages array`);
  return {
    ...strings(result, ['description'] as const),
    messages: result.messages.filter(isObject).map((m) => ({ role: str(m.role) ?? '?', content: m.content })),
  };
}
