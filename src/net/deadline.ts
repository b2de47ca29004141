// One request's time limit, joined with the caller's abort signal. The limit covers the whole
// request, body included: the Anthropic SDK's own timeout stops at the response headers, so a
// stream that stalls half way would otherwise hang the turn.
export interface Deadline {
  /** aborts when the time is up or the caller aborts */
  readonly signal: AbortSignal;
  /** true when this deadline, not the caller, aborted the request */
  expired(): boolean;
  /** clears the timer and the caller listener; call it when the request is over */
  clear(): void;
}

export function startDeadline(ms: number, caller?: AbortSignal): Deadline {
  const ac = new AbortController();
  let expired = false;
  const onCallerAbort = () => ac.abort(caller?.reason);
  const timer = setTimeout(() => {
    expired = true;
    ac.abort(new DOMException(`timed out after ${ms} ms`, 'TimeoutError'));
  }, ms);
  if (caller?.aborted) onCallerAbort();
  else caller?.addEventListener('abort', onCallerAbort, { once: true });
  return {
    signal: ac.signal,
    expired: () => expired && !caller?.aborted,
    clear() {
      clearTimeout(timer);
      caller?.removeEventListener('abort', onCallerAbort);
    },
  };
}
