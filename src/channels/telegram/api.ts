// The Bot API over Node's built-in fetch: one function per call, a typed error per failure. No bot
// framework: grammY would add ~424 KiB to the bundle (mostly Unicode tables) and every KiB there
// costs idle memory; the types come from @grammyjs/types at build time only.
import type { File, Message, Update, UserFromGetMe } from '@grammyjs/types';
import { targetOf } from './topic.js';
import { httpFetch } from '../../net/fetch.js';

/** A refusal by Telegram ({"ok": false}) or a transport failure (code 0). */
export class TelegramError extends Error {
  constructor(
    readonly method: string,
    /** the HTTP status Telegram answered with; 0 when no answer came (network, timeout) */
    readonly code: number,
    readonly description: string,
    /** seconds to wait, from a 429 */
    readonly retryAfter?: number,
  ) {
    super(`${method}: ${code ? `${code} ` : ''}${description}`);
  }
  /** the formatting of a message was refused; the plain text is sent instead */
  get isParseError(): boolean {
    return this.code === 400 && /can't parse entities|can't find end of the entity/i.test(this.description);
  }
  get isNotModified(): boolean {
    return this.code === 400 && /message is not modified/i.test(this.description);
  }
}

export interface TelegramApi {
  call<T>(method: string, params?: Record<string, unknown>, opts?: { timeoutMs?: number; signal?: AbortSignal }): Promise<T>;
  getMe(): Promise<UserFromGetMe>;
  getUpdates(offset: number, timeoutSeconds: number, signal?: AbortSignal): Promise<Update[]>;
  sendMessage(params: Record<string, unknown>): Promise<Message.TextMessage>;
  editMessageText(params: Record<string, unknown>): Promise<Message.TextMessage | true>;
  getFile(fileId: string): Promise<File>;
  /** a voice note (OGG/Opus bytes), uploaded as multipart/form-data */
  sendVoice(chatId: string, ogg: Buffer, opts?: { duration?: number; replyTo?: number }): Promise<Message.VoiceMessage>;
  /** the bytes of a file, refused above `maxBytes` while it downloads */
  download(filePath: string, maxBytes: number): Promise<Buffer>;
}

const DEFAULT_TIMEOUT_MS = 30_000;

/** How long a long poll of `timeoutSeconds` may stay silent: its timeout plus a grace of a fifth of it (2-10 s). */
export const pollDeadlineMs = (timeoutSeconds: number) => timeoutSeconds * 1000 + Math.min(10_000, Math.max(2000, timeoutSeconds * 200));

export function telegramApi(baseUrl: string, token: string): TelegramApi {
  const base = baseUrl.replace(/\/+$/, '');
  // The token is part of every URL: errors never show a URL, only the method.
  async function call<T>(method: string, params: Record<string, unknown> | FormData = {}, opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<T> {
    const timeout = AbortSignal.timeout(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
    // A file goes as multipart/form-data (fetch sets the boundary); everything else as JSON.
    const init = params instanceof FormData ? { body: params } : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(params) };
    let res: Response;
    try {
      res = await httpFetch(`${base}/bot${token}/${method}`, { method: 'POST', ...init, signal });
    } catch (err) {
      const why = timeout.aborted ? `no answer within ${Math.round((opts.timeoutMs ?? DEFAULT_TIMEOUT_MS) / 1000)} s` : opts.signal?.aborted ? 'cancelled' : transportReason(err);
      throw new TelegramError(method, 0, why);
    }
    let body: { ok?: boolean; result?: unknown; error_code?: number; description?: string; parameters?: { retry_after?: number } };
    try {
      body = (await res.json()) as typeof body;
    } catch {
      throw new TelegramError(method, res.status, `the answer was not JSON (HTTP ${res.status})`);
    }
    if (body.ok === true) return body.result as T;
    throw new TelegramError(method, body.error_code ?? res.status, body.description ?? `HTTP ${res.status}`, body.parameters?.retry_after);
  }
  return {
    call,
    getMe: () => call<UserFromGetMe>('getMe'),
    getUpdates: (offset, timeoutSeconds, signal) =>
      // The watchdog: a poll still silent a little after its own timeout is a half-open connection;
      // abandoning it lets the next poll start on a fresh one, well within one more poll timeout.
      call<Update[]>('getUpdates', { offset, timeout: timeoutSeconds, allowed_updates: ['message', 'callback_query'] }, { timeoutMs: pollDeadlineMs(timeoutSeconds), signal }),
    sendMessage: (params) => call<Message.TextMessage>('sendMessage', params),
    editMessageText: (params) => call<Message.TextMessage | true>('editMessageText', params),
    getFile: (fileId) => call<File>('getFile', { file_id: fileId }),
    sendVoice(chatId, ogg, opts = {}) {
      const form = new FormData();
      const target = targetOf(chatId);
      form.append('chat_id', target.chat_id);
      if (target.message_thread_id !== undefined) form.append('message_thread_id', String(target.message_thread_id));
      form.append('voice', new Blob([new Uint8Array(ogg)], { type: 'audio/ogg' }), 'reply.ogg');
      if (opts.duration !== undefined) form.append('duration', String(Math.max(1, Math.round(opts.duration))));
      if (opts.replyTo !== undefined) form.append('reply_parameters', JSON.stringify({ message_id: opts.replyTo, allow_sending_without_reply: true }));
      // An upload of a minute of speech is ~250 KB: more time than a text message, on a slow uplink.
      return call<Message.VoiceMessage>('sendVoice', form, { timeoutMs: 120_000 });
    },
    async download(filePath, maxBytes) {
      let res: Response;
      try {
        res = await httpFetch(`${base}/file/bot${token}/${filePath}`, { signal: AbortSignal.timeout(120_000) });
      } catch (err) {
        throw new TelegramError('download', 0, transportReason(err));
      }
      if (!res.ok || !res.body) throw new TelegramError('download', res.status, `HTTP ${res.status}`);
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
        size += chunk.length;
        if (size > maxBytes) throw new TelegramError('download', 413, `the file is larger than ${maxBytes} bytes`);
        chunks.push(Buffer.from(chunk));
      }
      return Buffer.concat(chunks);
    },
  };
}

function transportReason(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}
