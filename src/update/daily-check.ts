// update.check = daily: the gateway looks at update.url once a day and tells the owner about a
// newer signed release, or about a release it refuses (bad signature, unknown key). It never
// installs anything: under systemd the gateway cannot write its own executable (ProtectSystem=strict),
// and an update is the owner's decision. Each message is sent once, not every day.
import type { PinclawConfig } from '../config/schema.js';
import { errorMessage } from '../errors.js';
import { log } from '../log.js';
import type { Db } from '../store/db.js';
import { getState, setState } from '../store/state.js';
import { ReleaseError, fetchRelease } from './release.js';
import { compareVersions } from './release-files.js';

export interface DailyCheck {
  config: PinclawConfig;
  db: Db;
  currentVersion: string;
  /** to owner.notify */
  tell(text: string): void;
  arch?: string;
}

const LAST_NOTICE = 'update.last_notice';

/** One check; returns what the owner was told (undefined: nothing new to say). */
export async function dailyUpdateCheck(o: DailyCheck): Promise<string | undefined> {
  let text: string | undefined;
  try {
    const r = await fetchRelease(o.config, o.arch);
    if (compareVersions(r.version, o.currentVersion) > 0) text = `pinclaw ${r.version} is available (this is ${o.currentVersion}): run \`sudo pinclaw update\` on the board to install it`;
  } catch (err) {
    // A release pinclaw refuses is the owner's business; a network error is not worth a message.
    if (!(err instanceof ReleaseError)) {
      log.warn(`update check: ${errorMessage(err)}`);
      return undefined;
    }
    text = `pinclaw's daily update check: ${err.message}. Nothing was installed; this pinclaw (${o.currentVersion}) goes on`;
  }
  if (text === undefined || getState(o.db, LAST_NOTICE) === text) return undefined;
  o.tell(text);
  setState(o.db, LAST_NOTICE, text);
  return text;
}
