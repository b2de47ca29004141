// A TCP port on 127.0.0.1 that nothing listens on right now (the kernel's choice), for a server a
// test starts by port (mosquitto, a QEMU serial socket, an MCP server over HTTP) or a peer that
// must find nobody there.
import { createServer } from 'node:net';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}
