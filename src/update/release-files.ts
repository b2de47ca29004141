// What a release location holds and how its pieces are read: SHA256SUMS (sha256sum's format), the
// version in the trusted comment of its signature, and versions compared as X.Y.Z.
export const SUMS_FILE = 'SHA256SUMS';
export const SUMS_SIGNATURE = 'SHA256SUMS.minisig';

/** The executable of this machine's architecture in a release: pinclaw-linux-x64, pinclaw-linux-arm64. */
export function executableName(arch: string = process.arch): string {
  return `pinclaw-linux-${arch}`;
}

/** SHA256SUMS lines ("<64 hex>  name", or " *name" in binary mode) as name → hex digest. */
export function parseSums(text: string): Map<string, string> {
  const out = new Map<string, string>();
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    const m = /^([0-9a-fA-F]{64}) [ *](.+)$/.exec(line.trimEnd());
    if (!m) throw new Error(`${SUMS_FILE} line ${i + 1} is not "<sha256>  <file name>": ${JSON.stringify(line.slice(0, 80))}`);
    out.set(m[2]!, m[1]!.toLowerCase());
  });
  return out;
}

const VERSION = /^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?$/;

export function isVersion(text: string): boolean {
  return VERSION.test(text);
}

/** The version:X.Y.Z word of a trusted comment; undefined when it has none. */
export function versionOfComment(comment: string): string | undefined {
  const m = /(?:^|\s)version:(\S+)/.exec(comment);
  return m && isVersion(m[1]!) ? m[1] : undefined;
}

/** <0, 0, >0 as a is older, the same, newer than b; a pre-release (1.2.0-rc.1) is older than its release. */
export function compareVersions(a: string, b: string): number {
  const pa = VERSION.exec(a);
  const pb = VERSION.exec(b);
  if (!pa || !pb) throw new Error(`not a version: ${pa ? b : a}`);
  for (let i = 1; i <= 3; i++) {
    const d = Number(pa[i]) - Number(pb[i]);
    if (d) return d;
  }
  const [ra, rb] = [pa[4], pb[4]];
  if (ra === rb) return 0;
  if (ra === undefined) return 1;
  if (rb === undefined) return -1;
  return ra.localeCompare(rb, 'en', { numeric: true });
}
