// The far end of bench/serial, in its own process like a real board: `echo` sends every byte back;
// `mcu` runs the firmware model of test/support/fake-mcu.ts (the protocol's rules, no emulator).
import { openSerialLink } from '../../src/hardware/serial/index.js';
import { fakeMcu } from '../../test/support/fake-mcu.js';

const [mode, port] = process.argv.slice(2);
const link = await openSerialLink(port!, { baud: 115200 });
if (mode === 'echo') {
  link.onData((b) => void link.write(b));
} else {
  const mcu = fakeMcu({ hello: [1, 1, 0, 0, 10, 5, ...Buffer.from('bench'), 1, 13, 0x03] });
  link.onData((b) => void mcu.link.write(b));
  mcu.link.onData((b) => void link.write(b));
}
process.stdout.write('ready\n');
process.on('SIGTERM', () => void link.close().then(() => process.exit(0)));
