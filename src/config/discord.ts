// What the schema's tree cannot say about channels.discord: allow-list entries are user ids (snowflakes),
// so a username or a mention pasted there is refused at load instead of silently matching nobody.
import type { PinclawConfig } from './schema.js';
import type { ConfigIssue } from './issue.js';

/** A Discord snowflake: 17 to 20 digits. */
export const SNOWFLAKE = /^\d{17,20}$/;

export function discordIssues(d: PinclawConfig['channels']['discord']): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  d.allowFrom.forEach((e, i) => {
    if (!SNOWFLAKE.test(e)) issues.push({ path: `channels.discord.allowFrom[${i}]`, expected: 'a Discord user id (17 to 20 digits)', found: JSON.stringify(e), hint: 'not the username: in Discord, Settings → Advanced → Developer Mode, then right-click the user → Copy User ID' });
  });
  return issues;
}
