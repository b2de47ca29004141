// The release at update.url, checked: SHA256SUMS signed by a trusted minisign key, the version
// from the signature's trusted comment, and this machine's executable listed in it. Nothing here
// writes anything: `pinclaw update --check` and the daily check stop after this.
import type { PinclawConfig } from '../config/schema.js';
import { ConfigError, errorMessage } from '../errors.js';
import { fetchSmall, releaseFileUrl, releaseUrlProblem } from './download.js';
import { parsePublicKey, verifyMinisign, type MinisignKey } from './minisign.js';
import { RELEASE_KEYS } from './release-keys.js';
import { SUMS_FILE, SUMS_SIGNATURE, executableName, parseSums, versionOfComment } from './release-files.js';

/** Refuses a release: the cause in words, for the command line and the owner's chat. */
export class ReleaseError extends Error {}

export interface Release {
  version: string;
  /** update.url */
  base: string;
  /** the file name of this machine's executable in it */
  executable: string;
  sha256: string;
  keyId: string;
}

/** The built-in release keys and update.publicKeys; a key that does not parse names its place. */
export function trustedKeys(config: PinclawConfig): MinisignKey[] {
  const keys = RELEASE_KEYS.map((k) => parsePublicKey(k));
  config.update.publicKeys.forEach((text, i) => {
    try {
      keys.push(parsePublicKey(text));
    } catch (err) {
      throw new ConfigError(`update.publicKeys[${i}]: ${errorMessage(err)}; give the RW... line of the release's minisign.pub`);
    }
  });
  return keys;
}

/** update.url, checked; a ConfigError naming the key when it is unset or no URL. */
export function releaseBase(config: PinclawConfig): string {
  const url = config.update.url;
  if (url === undefined || url === '') {
    throw new ConfigError('update.url is not set: there is no release location to update from (the project publishes none yet); set it with `pinclaw config set update.url URL` to a location holding pinclaw-linux-<arch>, SHA256SUMS and SHA256SUMS.minisig');
  }
  const problem = releaseUrlProblem(url);
  if (problem) throw new ConfigError(problem);
  return url;
}

export async function fetchRelease(config: PinclawConfig, arch: string = process.arch): Promise<Release> {
  const base = releaseBase(config);
  const keys = trustedKeys(config);
  if (keys.length === 0) {
    throw new ConfigError('no key to check a release with: this pinclaw has no release key built in (the project has made no signed release yet) and update.publicKeys is empty; add the public key (the RW... line of minisign.pub) of the release you trust to update.publicKeys');
  }
  const [sums, sig] = await Promise.all([fetchSmall(releaseFileUrl(base, SUMS_FILE)), fetchSmall(releaseFileUrl(base, SUMS_SIGNATURE))]);
  let verified;
  try {
    verified = verifyMinisign(sums, sig.toString('utf8'), keys);
  } catch (err) {
    throw new ReleaseError(`the release at ${base} is refused: ${SUMS_SIGNATURE}: ${errorMessage(err)}`);
  }
  const version = versionOfComment(verified.trustedComment);
  if (!version) throw new ReleaseError(`the release at ${base} is refused: its signature's trusted comment carries no version:X.Y.Z (it says ${JSON.stringify(verified.trustedComment)})`);
  let listed: Map<string, string>;
  try {
    listed = parseSums(sums.toString('utf8'));
  } catch (err) {
    throw new ReleaseError(`the release at ${base} is refused: ${errorMessage(err)}`);
  }
  const executable = executableName(arch);
  const sha256 = listed.get(executable);
  if (!sha256) throw new ReleaseError(`the release ${version} at ${base} has no executable for this machine (${executable}); it lists ${[...listed.keys()].join(', ') || 'nothing'}`);
  return { version, base, executable, sha256, keyId: verified.keyId };
}
