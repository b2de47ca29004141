// minisign signatures, verified with node:crypto alone (no minisign needed on the board), in the
// format `minisign -Vm` reads, so people can check a release by hand with the same files:
//   public key:  base64("Ed" || key_id[8] || ed25519_public_key[32])
//   signature:   untrusted comment: ...
//                base64(alg[2] || key_id[8] || ed25519_signature[64])   alg "ED": over BLAKE2b-512(file), "Ed": over the file
//                trusted comment: ...
//                base64(ed25519_signature[64] over signature[64] || trusted comment)
// The trusted comment is signed too, which is why the release's version travels in it.
import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';

export interface MinisignKey {
  /** the key id as minisign prints it (16 hex digits, upper case) */
  id: string;
  keyId: Buffer;
  key: KeyObject;
}

/** Why a signature was not accepted: what is wrong differs in what the owner should do. */
export type SignatureFault = 'malformed' | 'unknown-key' | 'bad-signature';

export class SignatureError extends Error {
  constructor(
    readonly fault: SignatureFault,
    message: string,
  ) {
    super(message);
  }
}

// DER SubjectPublicKeyInfo of an Ed25519 key, up to the 32 key bytes (RFC 8410).
const SPKI_ED25519 = Buffer.from('302a300506032b6570032100', 'hex');

/** minisign shows a key id little-endian: the 8 bytes reversed, in hex. */
const showId = (keyId: Buffer) => Buffer.from(keyId).reverse().toString('hex').toUpperCase();

function base64Exact(text: string, bytes: number, what: string): Buffer {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text)) throw new SignatureError('malformed', `${what} is not base64`);
  const b = Buffer.from(text, 'base64');
  if (b.length !== bytes) throw new SignatureError('malformed', `${what} holds ${b.length} bytes, not ${bytes}`);
  return b;
}

/** A public key from the RW... line, or the whole minisign.pub file (its comment line is skipped). */
export function parsePublicKey(text: string): MinisignKey {
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('untrusted comment:'));
  if (lines.length !== 1) throw new SignatureError('malformed', 'a minisign public key is one base64 line (RW...)');
  const raw = base64Exact(lines[0]!, 42, 'the public key');
  if (raw.subarray(0, 2).toString('latin1') !== 'Ed') throw new SignatureError('malformed', 'the public key is not an Ed25519 minisign key (it does not start with "Ed")');
  const keyId = raw.subarray(2, 10);
  const key = createPublicKey({ key: Buffer.concat([SPKI_ED25519, raw.subarray(10)]), format: 'der', type: 'spki' });
  return { id: showId(keyId), keyId, key };
}

export interface Verified {
  /** the signed comment, without its "trusted comment: " prefix */
  trustedComment: string;
  /** the id of the key that made the signature */
  keyId: string;
}

/**
 * Checks a .minisig text for `data` against the trusted keys: the signature of the data (or of its
 * BLAKE2b-512 hash), then the global signature that binds the trusted comment to it. Throws a
 * SignatureError naming the fault.
 */
export function verifyMinisign(data: Uint8Array, signatureText: string, keys: readonly MinisignKey[]): Verified {
  const lines = signatureText.replace(/\r\n/g, '\n').split('\n');
  if (lines.length < 4 || !lines[0]!.startsWith('untrusted comment:') || !lines[2]!.startsWith('trusted comment: ')) {
    throw new SignatureError('malformed', 'the signature file is not in minisign format (4 lines: untrusted comment, signature, trusted comment, global signature)');
  }
  const sig = base64Exact(lines[1]!.trim(), 74, 'the signature line');
  const alg = sig.subarray(0, 2).toString('latin1');
  if (alg !== 'ED' && alg !== 'Ed') throw new SignatureError('malformed', `unknown signature algorithm ${JSON.stringify(alg)} (minisign uses "ED" or "Ed")`);
  const keyId = sig.subarray(2, 10);
  const key = keys.find((k) => k.keyId.equals(keyId));
  if (!key) {
    const trusted = keys.map((k) => k.id).join(', ') || 'none';
    throw new SignatureError('unknown-key', `the signature was made by key ${showId(keyId)}, which is not trusted here (trusted: ${trusted}); add its public key to update.publicKeys if you built that release yourself`);
  }
  const signed = alg === 'ED' ? createHash('blake2b512').update(data).digest() : data;
  if (!verify(null, signed, key.key, sig.subarray(10))) throw new SignatureError('bad-signature', `the signature does not match the file (key ${key.id}): the file was changed or damaged after it was signed`);
  const trustedComment = lines[2]!.slice('trusted comment: '.length);
  const global = base64Exact(lines[3]!.trim(), 64, 'the global signature line');
  if (!verify(null, Buffer.concat([sig.subarray(10), Buffer.from(trustedComment, 'utf8')]), key.key, global)) {
    throw new SignatureError('bad-signature', `the trusted comment's signature does not match (key ${key.id}): the comment was changed after signing`);
  }
  return { trustedComment, keyId: key.id };
}
