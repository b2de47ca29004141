// The trigger filters decide, without the model, which hardware events become agent turns.
import t from 'tap';
import { EdgeFilter } from '../src/hardware/triggers/edge-filter.js';
import { ThresholdWatch } from '../src/hardware/triggers/threshold.js';

t.test('edges: kind, debounce of a bouncing contact, rate limit', async (t) => {
  const f = new EdgeFilter({ edge: 'falling', debounceMs: 50, maxPerWindow: 3, windowMs: 60_000 });
  t.same(f.offer('rising', 0), { pass: false, reason: 'edge' });
  t.same(f.offer('falling', 100), { pass: true });
  // A contact bouncing for 30 ms after a press: one turn, the bounces debounced.
  t.same(f.offer('falling', 1000), { pass: true });
  for (const ms of [1005, 1011, 1020, 1030]) t.same(f.offer('falling', ms), { pass: false, reason: 'debounce' }, `bounce at ${ms}`);
  // The quiet period restarts with every edge: 1030 + 50 is the first edge that counts again.
  t.same(f.offer('falling', 1079), { pass: false, reason: 'debounce' });
  t.same(f.offer('falling', 2000), { pass: true });
  t.same(f.offer('falling', 3000), { pass: false, reason: 'rate', stormStarted: true }, 'the fourth within a minute opens a storm');
  t.same(f.offer('falling', 4000), { pass: false, reason: 'rate' }, 'reported once');
  t.equal(f.settle(4000 + 30_000), undefined, 'not quiet for a window yet');
  t.same(f.settle(4000 + 60_000), { suppressed: 2, sinceMs: 61_000 });
  t.equal(f.settle(4000 + 120_000), undefined, 'the end is reported once');
});

t.test('a floating input is one storm, not thousands of turns', async (t) => {
  const f = new EdgeFilter({ edge: 'both', debounceMs: 20, maxPerWindow: 6, windowMs: 60_000 });
  let passed = 0;
  let stormsStarted = 0;
  let suppressed = 0;
  // 10 kHz of noise for 5 s (an edge every 100 µs).
  for (let i = 0; i < 50_000; i++) {
    const v = f.offer(i % 2 ? 'rising' : 'falling', i * 0.1);
    if (v.pass) passed++;
    else {
      suppressed++;
      if (v.stormStarted) stormsStarted++;
    }
  }
  const ended = f.settle(5000 + 60_000);
  t.equal(passed, 1, 'the first edge passes; the noise after it never does');
  t.equal(stormsStarted, 1);
  t.equal(suppressed, 49_999);
  t.equal(ended?.suppressed, 49_999, 'every suppressed edge is counted in the report');
});

t.test('thresholds fire once per crossing, with hysteresis', async (t) => {
  const w = new ThresholdWatch({ above: 30, below: 5, hysteresis: 2 });
  const fired = [20, 20, 29.9, 30, 30.5, 31, 29, 28.5, 30.2, 28, 30.1, 10, 4.9, 4, 6, 7, 4.5].map((v) => w.offer(v));
  t.same(
    fired.map((c, i) => (c ? `${i}:${c.direction}@${c.value}` : null)).filter(Boolean),
    ['4:above@30.5', '10:above@30.1', '12:below@4.9', '16:below@4.5'],
    'hovering near 30 fires once; it re-arms below 28; likewise below 5 re-arms above 7',
  );
  t.equal(new ThresholdWatch({ above: 1, hysteresis: 0 }).offer(Number.NaN), undefined, 'an unreadable value fires nothing');
  const first = new ThresholdWatch({ below: 10, hysteresis: 1 });
  t.same(first.offer(3), { direction: 'below', threshold: 10, value: 3 }, 'a first reading already past the threshold fires');
  t.throws(() => new ThresholdWatch({ hysteresis: 1 }), /needs above, below or both/);
  t.throws(() => new ThresholdWatch({ above: 1, below: 2, hysteresis: 0 }), /below \(2\) must not be greater than above \(1\)/);
  t.throws(() => new ThresholdWatch({ above: 1, hysteresis: -1 }), /hysteresis must be >= 0/);
});
