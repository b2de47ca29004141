// The signed messages of remote tool calls between the boards of a fleet (src/fleet/remote.ts).
// A signature is HMAC-SHA256 over a canonical text of every field but `sig`, so a node that holds
// the key can neither be impersonated nor have a call's tool, input, target or time changed on the
// broker. The canonical text is a JSON array in a fixed order with object keys sorted at every
// depth: the same on any sender whatever order its JSON encoder writes keys in.
import { timingSafeEqual } from 'node:crypto';
import { hmacSha256 } from '../native/index.js';

/** A call: published QoS 1 on `<base>/<to>/fleet/req`. */
export interface FleetRequest {
  v: 1;
  /** correlation id, unique per caller (a random UUID) */
  id: string;
  /** the calling node */
  from: string;
  /** the called node: signed, so a call to one node cannot be replayed against another with the same key */
  to: string;
  tool: string;
  input: unknown;
  /** the caller's clock when it sent the call, ms since the epoch */
  at: number;
  /** when the caller stops waiting (at + its timeout): the callee does not start a call after this */
  exp: number;
  /**
   * When the message whose turn made the call was received (the caller's clock): the callee holds a
   * physical tool to tools.physicalMaxAgeSeconds by it, as a local turn. Absent from a call that
   * answers no message (`pinclaw tool run`) and from callers older than it; the callee then counts from `at`.
   */
  rcv?: number;
  sig: string;
}

/** Why a call was refused before it reached the callee's tools (`code` of a refusal). */
export type RefusalCode = 'no-key' | 'unknown-caller' | 'bad-signature' | 'stale' | 'clock' | 'expired' | 'replay' | 'not-exposed' | 'malformed';

/** An answer: published QoS 1 on `<base>/<to>/fleet/res`. */
export interface FleetResponse {
  v: 1;
  /** the request's id */
  id: string;
  /** the answering node */
  from: string;
  /** the caller */
  to: string;
  /** true: the call went through the callee's tool registry (content/isError are its result, a policy refusal included) */
  ok: boolean;
  /** set when ok is false: why the call never reached the registry */
  code?: RefusalCode;
  content: string;
  isError: boolean;
  at: number;
  /** absent on a refusal the callee could not sign (it holds no key for that caller) */
  sig?: string;
}

/**
 * JSON with object keys sorted at every depth; undefined members dropped as JSON.stringify does. The
 * text must stay byte for byte what it was (older peers sign and check it): loops and string
 * concatenation rather than map/filter/join, which allocated arrays for every level on every call
 * of a round trip's four signatures.
 */
export function canonicalJson(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let s = '[';
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      if (i) s += ',';
      s += v === undefined ? 'null' : canonicalJson(v);
    }
    return `${s}]`;
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).sort();
  let s = '{';
  for (const k of keys) {
    const v = obj[k];
    if (v === undefined) continue;
    if (s.length > 1) s += ',';
    s += `${JSON.stringify(k)}:${canonicalJson(v)}`;
  }
  return `${s}}`;
}

export function requestText(r: Omit<FleetRequest, 'sig'>): string {
  // rcv is signed when present, appended so a call without it signs as before (callers that predate
  // it still verify); removing it from a call that had it changes the text, so the signature fails.
  const fields: unknown[] = ['pinclaw-fleet-req', r.v, r.id, r.from, r.to, r.tool, r.input ?? null, r.at, r.exp];
  if (r.rcv !== undefined) fields.push(r.rcv);
  return canonicalJson(fields);
}

export function responseText(r: Omit<FleetResponse, 'sig'>): string {
  return canonicalJson(['pinclaw-fleet-res', r.v, r.id, r.from, r.to, r.ok, r.code ?? null, r.content, r.isError, r.at]);
}

/** HMAC-SHA256 over the text, base64url: the addon's (native/hmac.cc), or node:crypto's without it. */
export function sign(key: string, text: string): string {
  return hmacSha256(key, text);
}

/** Constant-time comparison, so the time a check takes tells nothing about how much of a forged signature was right. */
export function verify(key: string, text: string, sig: unknown): boolean {
  if (typeof sig !== 'string' || !sig) return false;
  const want = Buffer.from(sign(key, text));
  const got = Buffer.from(sig);
  return got.length === want.length && timingSafeEqual(got, want);
}

export const signRequest = (key: string, r: Omit<FleetRequest, 'sig'>): FleetRequest => ({ ...r, sig: sign(key, requestText(r)) });
export const signResponse = (key: string, r: Omit<FleetResponse, 'sig'>): FleetResponse => ({ ...r, sig: sign(key, responseText(r)) });

export const NODE_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const ID = /^[A-Za-z0-9_-]{8,64}$/;

/** The request's shape, or what is wrong with it (before any signature is checked). */
export function parseRequest(payload: Buffer): FleetRequest | string {
  let m: unknown;
  try {
    m = JSON.parse(payload.toString('utf8'));
  } catch {
    return 'the payload is not JSON';
  }
  if (typeof m !== 'object' || m === null || Array.isArray(m)) return 'the payload is not a JSON object';
  const r = m as Record<string, unknown>;
  if (r.v !== 1) return `unsupported version ${JSON.stringify(r.v)} (this node speaks 1)`;
  if (typeof r.id !== 'string' || !ID.test(r.id)) return 'id: 8-64 letters, digits, _ or - expected';
  if (typeof r.from !== 'string' || !NODE_NAME.test(r.from)) return 'from: a node id expected';
  if (typeof r.to !== 'string' || !NODE_NAME.test(r.to)) return 'to: a node id expected';
  if (typeof r.tool !== 'string' || !TOOL_NAME.test(r.tool)) return 'tool: a tool name expected';
  if (typeof r.at !== 'number' || !Number.isFinite(r.at)) return 'at: a time in ms expected';
  if (typeof r.exp !== 'number' || !Number.isFinite(r.exp)) return 'exp: a time in ms expected';
  if (r.rcv !== undefined && (typeof r.rcv !== 'number' || !Number.isFinite(r.rcv))) return 'rcv: a time in ms expected';
  return {
    v: 1, id: r.id, from: r.from, to: r.to, tool: r.tool, input: r.input ?? {}, at: r.at, exp: r.exp,
    ...(typeof r.rcv === 'number' ? { rcv: r.rcv } : {}), sig: typeof r.sig === 'string' ? r.sig : '',
  };
}

export function parseResponse(payload: Buffer): FleetResponse | undefined {
  let m: unknown;
  try {
    m = JSON.parse(payload.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof m !== 'object' || m === null) return undefined;
  const r = m as Record<string, unknown>;
  if (r.v !== 1 || typeof r.id !== 'string' || typeof r.from !== 'string' || typeof r.to !== 'string' || typeof r.ok !== 'boolean') return undefined;
  if (typeof r.content !== 'string' || typeof r.isError !== 'boolean' || typeof r.at !== 'number') return undefined;
  return {
    v: 1, id: r.id, from: r.from, to: r.to, ok: r.ok,
    ...(typeof r.code === 'string' ? { code: r.code as RefusalCode } : {}),
    content: r.content, isError: r.isError, at: r.at,
    ...(typeof r.sig === 'string' ? { sig: r.sig } : {}),
  };
}
