// Receives AF_UNIX datagrams (what sd_notify sends). Node cannot bind such a socket, so a few lines
// of python3 do the receiving and print each datagram as a JSON string on its own line.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

const script = `
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1].replace('@', '\\0', 1) if sys.argv[1].startswith('@') else sys.argv[1])
print('ready', flush=True)
while True:
    print(json.dumps(s.recv(65536).decode('utf-8', 'replace')), flush=True)
`;

export interface Receiver {
  datagrams: string[];
  next(timeoutMs?: number): Promise<string>;
  close(): void;
}

export async function receiveDatagrams(path: string): Promise<Receiver> {
  const child = spawn('python3', ['-c', script, path], { stdio: ['ignore', 'pipe', 'inherit'] });
  const datagrams: string[] = [];
  let consumed = 0;
  let buf = '';
  let wake: (() => void) | undefined;
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`receiver exited with ${code}`)));
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line === 'ready') resolve();
        else datagrams.push(JSON.parse(line) as string);
      }
      wake?.();
    });
  });
  if (!path.startsWith('@') && !existsSync(path)) throw new Error(`receiver did not bind ${path}`);
  return {
    datagrams,
    async next(timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (datagrams.length <= consumed) {
        if (Date.now() > deadline) throw new Error(`no datagram on ${path} within ${timeoutMs} ms`);
        await new Promise<void>((r) => {
          wake = r;
          setTimeout(r, 50);
        });
      }
      return datagrams[consumed++]!;
    },
    close: () => child.kill(),
  };
}
