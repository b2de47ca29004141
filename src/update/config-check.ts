// The start checks of update.* (src/setup/config-checks.ts runs them for the gateway, `config set` and
// `config validate`): a URL that is no http(s) URL, a public key that does not parse, or a daily
// check with nowhere to look are refused when they are set, not found a day later.
import type { PinclawConfig } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import { releaseUrlProblem } from './download.js';
import { trustedKeys } from './release.js';

export function checkUpdateConfig(config: PinclawConfig): void {
  const { url, check } = config.update;
  if (url !== undefined && url !== '') {
    const problem = releaseUrlProblem(url);
    if (problem) throw new ConfigError(problem);
  } else if (check === 'daily') {
    throw new ConfigError('update.check is daily but update.url is not set: set update.url to the release location, or update.check to off');
  }
  trustedKeys(config);
}
