// The SSRF guard: a fetch may only reach public addresses, checked after DNS resolution and again on
// every redirect, and the connection goes to the address that was checked (no second lookup that a
// rebinding DNS server could answer differently).
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

// Made on the first check, not when the tools are built: net.BlockList loads node's address
// classes, which a gateway's start does not otherwise need.
let blockedList: BlockList | undefined;
function blocked(): BlockList {
  if (blockedList) return blockedList;
  const list = new BlockList();
  // Loopback, "this network", private, carrier-grade NAT, link-local (cloud metadata 169.254.169.254),
  // benchmarking, multicast and reserved ranges; IPv6 equivalents, including IPv4-mapped forms.
  for (const [net, bits] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4]] as const) {
    list.addSubnet(net, bits, 'ipv4');
  }
  for (const [net, bits] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['64:ff9b::', 96]] as const) {
    list.addSubnet(net, bits, 'ipv6');
  }
  return (blockedList = list);
}

export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 6) {
    // ::ffff:a.b.c.d is the IPv4 address a.b.c.d: judge it as such.
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return !blocked().check(mapped[1]!, 'ipv4');
    return !blocked().check(address, 'ipv6');
  }
  return !blocked().check(address, 'ipv4');
}

export interface Vetted {
  address: string;
  family: 4 | 6;
}

/** Resolves `host` and returns an address to connect to, or throws naming the rule that refused it. */
export async function vetHost(host: string, allowed: readonly string[]): Promise<Vetted> {
  const bare = host.replace(/^\[|\]$/g, '');
  const explicit = allowed.includes(bare.toLowerCase());
  const addresses = isIP(bare) ? [{ address: bare, family: isIP(bare) as 4 | 6 }] : await lookup(bare, { all: true, verbatim: true }).catch((err: NodeJS.ErrnoException) => {
    throw new Error(`cannot resolve ${bare}: ${err.code ?? err.message}`);
  });
  if (addresses.length === 0) throw new Error(`cannot resolve ${bare}`);
  if (!explicit) {
    // Every address must be public: otherwise the next lookup could pick the private one.
    const bad = addresses.find((a) => !isPublicAddress(a.address));
    if (bad) throw new Error(`refused by the SSRF guard: ${bare} resolves to ${bad.address}, a loopback, private, link-local or reserved address (allow it with web.allowedHosts)`);
  }
  const first = addresses[0]!;
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}
