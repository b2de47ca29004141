// Finding devices the way `i2cdetect` does by default: an SMBus quick write to most addresses, a
// receive byte to 0x30-0x37 and 0x50-0x5f. A quick write is the smallest thing a bus can carry (the
// address and the R/W bit, no data), but some EEPROMs take it for the start of a write: the Atmel
// AT24RF08 is known to be corrupted by it, and 0x50-0x5f are where EEPROMs (and memory SPD chips)
// live, 0x30-0x37 where SPD EEPROMs take write-protect commands. There a read, which changes
// nothing, is the safe probe. Elsewhere a read is the riskier one: it is known to lock up the bus on
// some write-only chips (clock generators). So neither method stands in for the other: an address
// whose method the adapter lacks is skipped, as i2cdetect does.
import { FIRST_ADDRESS, LAST_ADDRESS } from './validate.js';
import type { I2cFuncs, I2cScanResult } from './types.js';

export type ScanMethod = 'quick' | 'readByte';

export interface ScanStep {
  address: number;
  method: ScanMethod;
  /** False when the adapter lacks the method: the address is skipped. */
  supported: boolean;
}

/** The probe i2cdetect uses at an address by default. */
export function scanMethod(address: number): ScanMethod {
  return (address >= 0x30 && address <= 0x37) || (address >= 0x50 && address <= 0x5f) ? 'readByte' : 'quick';
}

/** Every address 0x03-0x77 (0x00-0x02 and 0x78-0x7f are reserved, see validate.ts) with its probe. */
export function scanPlan(funcs: Pick<I2cFuncs, 'quick' | 'readByte'>): ScanStep[] {
  const steps: ScanStep[] = [];
  for (let address = FIRST_ADDRESS; address <= LAST_ADDRESS; address++) {
    const method = scanMethod(address);
    steps.push({ address, method, supported: method === 'quick' ? funcs.quick : funcs.readByte });
  }
  return steps;
}

/** What one probe saw. */
export type ProbeOutcome = 'found' | 'absent' | 'busy';

/**
 * How a probe's error reads: EBUSY from I2C_SLAVE is an address a kernel driver holds (i2cdetect's
 * "UU"); a transfer error is an address nobody answered, whatever the errno (as in i2cdetect: a
 * timeout or lost arbitration there says nothing about the other addresses). Anything before the
 * transfer (no bus, no permission, not an adapter) ends the scan.
 */
export function probeOutcome(err: unknown): ProbeOutcome {
  const e = err as { code?: unknown; step?: unknown };
  if (e?.code === 'EBUSY' && e.step === 'I2C_SLAVE') return 'busy';
  if (e?.step === 'I2C_SMBUS') return 'absent';
  throw err;
}

/** Probes address after address (one bus transaction at a time, as i2cdetect). */
export async function runScan(bus: number, funcs: I2cFuncs, probe: (address: number, method: ScanMethod) => Promise<void>): Promise<I2cScanResult> {
  const result: I2cScanResult = { bus, found: [], busy: [], skipped: [] };
  for (const step of scanPlan(funcs)) {
    if (!step.supported) {
      result.skipped.push(step.address);
      continue;
    }
    let outcome: ProbeOutcome;
    try {
      await probe(step.address, step.method);
      outcome = 'found';
    } catch (err) {
      outcome = probeOutcome(err);
    }
    if (outcome === 'found') result.found.push(step.address);
    else if (outcome === 'busy') result.busy.push(step.address);
  }
  return result;
}
