// The prompt's day and clock time: built from V8's Date for the host's zone (no ICU formatter, whose
// tables cost 1.4 MiB for the process's lifetime) and from Intl for any other zone; the two must say
// the same thing.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { clockTime, dateTimeText, dayText, hostZoneName, knownZone } from '../src/local-time.js';
import { tempDir } from './support/proc.js';

t.test('the host zone is read from TZ, else from the /etc/localtime link', async (t) => {
  const dir = tempDir();
  const link = (name: string, target: string) => {
    const p = join(dir, name);
    symlinkSync(target, p);
    return p;
  };
  const none = join(dir, 'none');
  t.equal(hostZoneName({ TZ: 'Europe/Berlin' }, none), 'Europe/Berlin');
  t.equal(hostZoneName({ TZ: ':America/New_York' }, none), 'America/New_York', 'the leading colon of TZ is dropped');
  t.equal(hostZoneName({ TZ: 'Etc/UTC' }, none), 'UTC', 'aliases of UTC are UTC, as ICU says');
  t.equal(hostZoneName({ TZ: 'CET-1CEST,M3.5.0,M10.5.0/3' }, none), undefined, 'a POSIX rule is left to Intl');
  t.equal(hostZoneName({ TZ: 'CET-1CEST' }, none), undefined, 'a short POSIX rule too');
  t.equal(hostZoneName({ TZ: 'EST5EDT' }, none), undefined, 'and a legacy name with an offset in it');
  t.equal(hostZoneName({ TZ: 'Etc/GMT+3' }, none), 'Etc/GMT+3', 'a fixed-offset zone has its slash');
  t.equal(hostZoneName({}, link('a', '/usr/share/zoneinfo/Europe/Berlin')), 'Europe/Berlin');
  t.equal(hostZoneName({ TZ: '' }, link('b', '../usr/share/zoneinfo/posix/Asia/Tokyo')), 'Asia/Tokyo', 'posix/ is not part of the name');
  t.equal(hostZoneName({}, link('c', '/usr/share/zoneinfo/Etc/UTC')), 'UTC');
  writeFileSync(join(dir, 'copied'), 'TZif');
  t.equal(hostZoneName({}, join(dir, 'copied')), undefined, 'a copied file names no zone: Intl is asked');
  t.equal(hostZoneName({}, none), undefined, 'no /etc/localtime: Intl is asked');
});

t.test('another zone than the host one goes through Intl', async (t) => {
  const at = new Date('2026-03-01T23:30:00Z');
  t.equal(dayText(at, 'Asia/Tokyo'), 'Monday, 2 March 2026');
  t.equal(clockTime(at, 'Asia/Tokyo'), '08:30');
  t.equal(clockTime(new Date('2026-03-01T10:05:00Z'), 'Europe/Berlin'), '11:05');
  t.equal(dateTimeText(new Date('2026-03-01T10:05:07Z'), 'Europe/Berlin'), 'Sunday, 1 March 2026 at 11:05:07 CET');
  t.equal(knownZone('Mars/Olympus'), false);
});

// In a child with TZ set: the host path must not touch Intl at all (it is replaced by a thrower
// while the host texts are made), and must equal Intl's text for every hour of a year, half hours
// included (Lord Howe shifts by 30 minutes, Kathmandu sits at +05:45).
const child = (tz: string) => `
const m = await import(${JSON.stringify(new URL('../src/local-time.ts', import.meta.url).href)});
const real = Intl.DateTimeFormat;
Intl.DateTimeFormat = function () { throw new Error('Intl used'); };
const instants = [];
for (let h = 0; h < 366 * 24; h++) for (const min of [0, 15, 30, 45]) instants.push(new Date(Date.UTC(2026, 0, 1) + h * 3600e3 + min * 60e3));
const zone = m.systemZone();
const known = m.knownZone(zone);
const host = instants.map((d) => [m.dayText(d, undefined), m.clockTime(d, undefined), m.dayText(d, zone), m.dateTimeText(d, undefined)]);
Intl.DateTimeFormat = real;
const day = new Intl.DateTimeFormat('en-GB', { timeZone: ${JSON.stringify(tz)}, dateStyle: 'full' });
const clock = new Intl.DateTimeFormat('en-GB', { timeZone: ${JSON.stringify(tz)}, hour: '2-digit', minute: '2-digit', hour12: false });
const stamp = new Intl.DateTimeFormat('en-GB', { timeZone: ${JSON.stringify(tz)}, hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false, timeZoneName: 'longOffset' });
const wrong = [];
instants.forEach((d, i) => {
  const want = [day.format(d), clock.format(d), day.format(d), day.format(d) + ' at ' + stamp.format(d)];
  if (want.join('|') !== host[i].join('|')) wrong.push({ at: d.toISOString(), got: host[i], want });
});
console.log(JSON.stringify({ zone, known, compared: instants.length, wrong: wrong.slice(0, 3), wrongCount: wrong.length }));`;

for (const tz of ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'UTC']) {
  t.test(`the host path equals Intl, without it (TZ=${tz})`, async (t) => {
    // tap's NODE_OPTIONS stay: they let the child import the TypeScript module.
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', child(tz)], { encoding: 'utf8', env: { ...process.env, TZ: tz } }).trim().split('\n');
    const r = JSON.parse(out[out.length - 1]!) as { zone: string; known: boolean; compared: number; wrong: unknown[]; wrongCount: number };
    t.equal(r.zone, tz, 'the zone is named without Intl');
    t.equal(r.known, true, 'and known without it');
    t.equal(r.compared, 366 * 24 * 4);
    t.same(r.wrong, [], `${r.wrongCount} of ${r.compared} instants differ`);
  });
}
