// What the schema's tree cannot say about channels.signal: an account is needed once url is set, and
// the account and the allow-list entries must be numbers or ids Signal knows, so a typo (a number
// without its +, a name) is refused at load instead of silently matching nobody.
import type { PinclawConfig } from './schema.js';
import type { ConfigIssue } from './issue.js';

/** E.164: a +, then up to 15 digits. */
export const E164 = /^\+[1-9]\d{5,14}$/;
/** A Signal ACI (a UUID). */
export const ACI = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function signalIssues(s: PinclawConfig['channels']['signal']): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  if (s.url === undefined) return issues;
  if (!/^https?:\/\/[^/]+/.test(s.url)) issues.push({ path: 'channels.signal.url', expected: 'an http:// URL of the signal-cli daemon', found: JSON.stringify(s.url), hint: 'the address given to signal-cli daemon --http, e.g. http://127.0.0.1:8080' });
  if (s.account === undefined || !E164.test(s.account)) {
    issues.push({ path: 'channels.signal.account', expected: 'the account the daemon runs, as E.164 (+4915112345678)', found: s.account === undefined ? 'nothing' : JSON.stringify(s.account), hint: s.account === undefined ? 'the number given to signal-cli -a; set it before channels.signal.url' : 'the number given to signal-cli -a' });
  }
  s.allowFrom.forEach((e, i) => {
    if (!E164.test(e) && !(e.startsWith('uuid:') && ACI.test(e.slice(5)))) {
      issues.push({ path: `channels.signal.allowFrom[${i}]`, expected: 'an E.164 number (+4915112345678) or uuid:<ACI>', found: JSON.stringify(e), hint: 'a number needs its + and country code' });
    }
  });
  return issues;
}
