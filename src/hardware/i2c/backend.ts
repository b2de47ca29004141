// A backend from its primitives: argument checks, the choice of bus operation (plan.ts) and the scan
// (scan.ts) are written once here, so the addon and i2c-bus differ only in how a call reaches the
// kernel.
import { i2cError, targetOf } from './errors.js';
import { checkReadOptions, checkWriteOptions, needsFuncs, planRead, planWrite, readResult, type Unsupported } from './plan.js';
import { runScan } from './scan.js';
import type { I2cBackend, I2cPlan, I2cPrimitives } from './types.js';
import { checkAddress, checkBus } from './validate.js';

export function backendFrom(p: I2cPrimitives): I2cBackend {
  const refuse = (bus: number, address: number, u: Unsupported): never => {
    const path = p.path(bus);
    throw i2cError({ code: 'EOPNOTSUPP', path, bus: targetOf(path).bus, address, operation: u.what, step: 'plan' });
  };
  const run = (bus: number, address: number, plan: I2cPlan) =>
    plan.kind === 'transfer' ? p.transfer(bus, address, plan.messages) : p.smbus(bus, address, plan.call);

  return {
    kind: p.kind,
    buses: () => p.buses(),
    funcs: async (bus) => p.funcs(checkBus(bus)),
    async scan(bus) {
      const funcs = await p.funcs(checkBus(bus));
      return runScan(bus, funcs, async (address, method) => {
        await p.smbus(bus, address, method === 'quick' ? { op: 'quick', bit: 0 } : { op: 'readByte' });
      });
    },
    async read(bus, address, options) {
      checkBus(bus);
      checkAddress(address);
      checkReadOptions(options);
      const plan = planRead(options, needsFuncs(options) ? await p.funcs(bus) : null);
      if (plan.kind === 'unsupported') return refuse(bus, address, plan);
      return readResult(plan, await run(bus, address, plan));
    },
    async write(bus, address, options) {
      checkBus(bus);
      checkAddress(address);
      checkWriteOptions(options);
      const plan = planWrite(options, needsFuncs(options) ? await p.funcs(bus) : null);
      if (plan.kind === 'unsupported') return refuse(bus, address, plan);
      await run(bus, address, plan);
    },
  };
}
