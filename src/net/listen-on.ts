// Listening on host:port without Node's name lookup when the host is an IPv4 literal.
//
// Why: `server.listen(port, host)` passes every host, an address too, through dns.lookup, and the
// lookup's answer through net's filterOnlyValidAddress, which asks isIPv6 of it. The first isIPv6 of
// a process compiles Node's IPv6 pattern: 3-4.5 ms of a gateway's ~60 ms start on the development
// machine (bare Node 24.21: `isIPv6('127.0.0.1')` first 2.9-4.5 ms, then 0.8-1.3), for an answer
// known in advance. For an IPv4 literal the socket is bound the way Node's cluster binds one for
// its workers (net._createServerHandle) and handed to listen(handle), which Node documents. Any
// other host (a name, an IPv6 literal), or a Node without that function, takes the usual path.
import * as net from 'node:net';
import { getSystemErrorMap } from 'node:util';

type CreateServerHandle = (address: string, port: number, addressType: number) => object | number;
type ListenError = NodeJS.ErrnoException & { address?: string | null; port?: number };

/** Node's own function, where it is (every Node since 0.x; not part of its documented API). */
function serverHandleMaker(): CreateServerHandle | undefined {
  const make = (net as unknown as { _createServerHandle?: unknown })._createServerHandle;
  return typeof make === 'function' ? (make as CreateServerHandle) : undefined;
}

/**
 * `server.listen(port, host, onListening)`, with the same events and the same errors: 'listening'
 * once bound, or 'error' with the code, message, syscall, address and port Node gives
 * ("listen EADDRINUSE: address already in use 127.0.0.1:7420").
 */
export function listenOn(server: net.Server, port: number, host: string, onListening: () => void): void {
  const make = serverHandleMaker();
  if (!make || !net.isIPv4(host)) {
    server.listen(port, host, onListening);
    return;
  }
  // Node's details: "host:port", or the host alone for port 0; the port only when there is one.
  const where = port > 0 ? `${host}:${port}` : host;
  const at = port > 0 ? { address: host, port } : { address: host };
  const handle = make(host, port, 4);
  if (typeof handle === 'number') {
    const [code, text] = getSystemErrorMap().get(handle) ?? [`E${-handle}`, 'unknown error'];
    const err: ListenError = Object.assign(new Error(`listen ${code}: ${text} ${where}`), { code, errno: handle, syscall: 'listen', ...at });
    process.nextTick(() => server.emit('error', err));
    return;
  }
  // A bind error (EADDRINUSE) is reported by the listen on the handle, where Node knows neither the
  // address nor the port: they are added as Node's own path has them.
  const complete = (err: ListenError): void => {
    if (err.syscall !== 'listen' || err.address != null) return;
    Object.assign(err, at);
    if (port <= 0) delete err.port;
    err.message = `${err.message} ${where}`;
  };
  server.prependOnceListener('error', complete);
  server.once('listening', () => server.off('error', complete));
  server.listen(handle, onListening);
}
