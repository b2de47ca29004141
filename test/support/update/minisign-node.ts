// minisign signatures made in Node, for test/update.test.ts: the other direction of the cross-check
// (pinclaw's verifier reads what `minisign -S` writes; `minisign -V` must read what this writes).
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

export interface NodeSigner {
  /** the minisign.pub file's text */
  publicKeyFile: string;
  /** its RW... line */
  publicKey: string;
  /** a .minisig text for `data` (prehashed "ED", as minisign makes by default) */
  sign(data: Uint8Array, trustedComment: string): string;
}

export function nodeSigner(): NodeSigner {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  const keyId = randomBytes(8);
  const pub = Buffer.concat([Buffer.from('Ed'), keyId, raw]).toString('base64');
  const id = Buffer.from(keyId).reverse().toString('hex').toUpperCase();
  return {
    publicKey: pub,
    publicKeyFile: `untrusted comment: minisign public key ${id}\n${pub}\n`,
    sign: (data, trustedComment) => signWith(privateKey, keyId, data, trustedComment),
  };
}

function signWith(key: KeyObject, keyId: Buffer, data: Uint8Array, trustedComment: string): string {
  const sig = sign(null, createHash('blake2b512').update(data).digest(), key);
  const global = sign(null, Buffer.concat([sig, Buffer.from(trustedComment)]), key);
  return [
    'untrusted comment: signature from a test key',
    Buffer.concat([Buffer.from('ED'), keyId, sig]).toString('base64'),
    `trusted comment: ${trustedComment}`,
    global.toString('base64'),
    '',
  ].join('\n');
}
