// The pairing hint names the home when it is not the default one, quoted for a shell when needed.
import t from 'tap';
import { approveCommand } from '../src/channels/pairing-hint.js';

t.test('the default home needs no --home; any other is named', async (t) => {
  t.equal(approveCommand('ABCD2345', '/home/pi/.pinclaw', '/home/pi/.pinclaw'), 'pinclaw pairing approve ABCD2345');
  t.equal(approveCommand('ABCD2345', '/home/pi/.pinclaw/', '/home/pi/.pinclaw'), 'pinclaw pairing approve ABCD2345', 'the same directory written differently');
  t.equal(approveCommand('ABCD2345', undefined, '/home/pi/.pinclaw'), 'pinclaw pairing approve ABCD2345', 'no home given: the default');
  t.equal(approveCommand('ABCD2345', '/var/lib/pinclaw', '/home/pi/.pinclaw'), 'pinclaw --home /var/lib/pinclaw pairing approve ABCD2345');
  t.equal(approveCommand('ABCD2345', "/srv/bob's bot", '/home/pi/.pinclaw'), `pinclaw --home '/srv/bob'\\''s bot' pairing approve ABCD2345`, 'quoted so it can be pasted into a shell');
});
