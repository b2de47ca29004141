// What the schema's tree cannot say about channels.matrix: the homeserver is a URL, a token is needed
// with it, and allow-list entries are full user ids (@user:server), so a display name pasted there is
// refused at load instead of silently matching nobody. Terse: this is in the main bundle.
import type { PinclawConfig } from './schema.js';
import type { ConfigIssue } from './issue.js';

/** A Matrix user id: @localpart:server[:port]. */
export const MATRIX_USER = /^@[^:\s]+:[^\s:]+(:\d+)?$/;

export function matrixIssues(m: PinclawConfig['channels']['matrix']): ConfigIssue[] {
  const k = 'channels.matrix.';
  const issues: ConfigIssue[] = [];
  if (m.homeserver !== undefined && !/^https?:\/\/[^/\s]+/.test(m.homeserver)) issues.push({ path: `${k}homeserver`, expected: 'an https:// URL', found: JSON.stringify(m.homeserver), hint: 'the client-server URL, e.g. https://matrix.example.org' });
  if (m.homeserver !== undefined && !m.accessToken) issues.push({ path: `${k}accessToken`, expected: 'the bot\'s access token', found: 'nothing', hint: `set it, or unset ${k}homeserver` });
  m.allowFrom.forEach((e, i) => {
    if (!MATRIX_USER.test(e)) issues.push({ path: `${k}allowFrom[${i}]`, expected: 'a user id, @user:server', found: JSON.stringify(e), hint: 'the full id, e.g. @ada:example.org, not the display name' });
  });
  return issues;
}
