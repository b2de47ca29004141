// The minisign public keys built into pinclaw: a release signed by one of them is trusted without
// any configuration. There are two places so a key can be rotated (the next release is signed by
// the new key while older installs still trust the old one).
//
// The list is empty: the project has not made a signed release yet, so it has no release key to
// publish. When it does, its public key (the RW... line of minisign.pub) goes here. Until then a
// release is trusted only through update.publicKeys, e.g. the key of a release you built yourself.
export const RELEASE_KEYS: readonly string[] = [];
