// `pinclaw board list | show NAME | detect [--json]`: the known board profiles (built-in and the
// user's own in $PINCLAW_HOME/boards) and what this machine is and has attached.
import { loadConfig } from '../config/index.js';
import { EXIT, UsageError } from '../errors.js';
import { detectBoards } from '../hardware/boards/detect.js';
import { HOST_ROOTS, type HostRoots } from '../hardware/boards/host-roots.js';
import { loadBoardRegistry, unknownProfileMessage, userBoardsDir, type BoardRegistry } from '../hardware/boards/registry.js';
import { renderDetection, renderList, renderProfile, renderSkipped } from '../hardware/boards/render.js';
import { reservationStates } from '../hardware/boards/reservations.js';
import { lineIndex } from '../hardware/boards/schema.js';
import { chooseBoard } from '../hardware/boards/select.js';
import type { CliContext } from './context.js';

const USAGE = 'pinclaw board list | show NAME | detect [--json]';
const arity: Record<string, { n: number; usage: string }> = {
  list: { n: 0, usage: 'pinclaw board list [--json]' },
  show: { n: 1, usage: 'pinclaw board show NAME [--json]' },
  detect: { n: 0, usage: 'pinclaw board detect [--json]' },
};

/** Broken profiles are reported, never fatal: the others still work. */
function reportSkipped(registry: BoardRegistry, ctx: CliContext): void {
  for (const p of registry.problems) ctx.err(`pinclaw board: ${p}`);
  for (const line of renderSkipped(registry.skipped)) ctx.err(`pinclaw board: ${line}`);
}

/** `roots` lets tests describe a machine as a directory tree; the CLI passes none. */
export async function runBoard(sub: string, args: string[], ctx: CliContext, roots: HostRoots = HOST_ROOTS): Promise<number> {
  const spec = Object.hasOwn(arity, sub) ? arity[sub] : undefined;
  if (!spec) throw new UsageError(`board: unknown subcommand '${sub}'\nusage: ${USAGE}`);
  const rest = args[0] === '--' ? args.slice(1) : args;
  if (rest.length !== spec.n) throw new UsageError(`board ${sub}: expected ${spec.n === 0 ? 'no arguments' : 'NAME'}, got ${rest.length ? rest.map((a) => `'${a}'`).join(' ') : 'none'}\nusage: ${spec.usage}`);
  const registry = loadBoardRegistry({ userDir: userBoardsDir(ctx.paths) });

  switch (sub) {
    case 'list': {
      if (ctx.json) {
        const profiles = registry.profiles.map((p) => ({ id: p.profile.id, name: p.profile.name, kind: p.profile.kind, source: p.source, file: p.file, ...(p.overrides ? { overrides: p.overrides } : {}) }));
        ctx.out(JSON.stringify({ profiles, skipped: registry.skipped, problems: registry.problems }, null, 2));
      } else {
        renderList(registry.profiles).forEach((l) => ctx.out(l));
        reportSkipped(registry, ctx);
      }
      return EXIT.ok;
    }

    case 'show': {
      const name = rest[0]!;
      const loaded = registry.get(name);
      if (!loaded) throw new UsageError(`board show: ${unknownProfileMessage(name, registry)}\nusage: ${spec.usage}`);
      // The owner's releases of this profile's lines (hardware.release); a config that does not load
      // is for `config validate` to report, not a reason to hide the profile.
      let release: { line: string; reason: string }[] = [];
      try {
        const index = lineIndex(loaded.profile);
        release = loadConfig(ctx.paths, ctx.env).hardware.release.flatMap((r) => (r.line && index.has(r.line) ? [{ line: index.get(r.line)!.name, reason: r.reason ?? '' }] : []));
      } catch {
        release = [];
      }
      if (ctx.json) ctx.out(JSON.stringify({ source: loaded.source, file: loaded.file, ...(loaded.overrides ? { overrides: loaded.overrides } : {}), released: release, profile: loaded.profile }, null, 2));
      else {
        renderProfile(loaded).forEach((l) => ctx.out(l));
        if (release.length) ctx.out(`\nreleased by the owner (hardware.release):\n${release.map((r) => `  ${r.line}: ${r.reason}`).join('\n')}`);
      }
      return EXIT.ok;
    }

    case 'detect': {
      const config = loadConfig(ctx.paths, ctx.env);
      const configured = config.board.profile;
      const detection = detectBoards(registry.profiles, roots);
      const choice = chooseBoard(registry, configured, detection);
      const reservations = choice.loaded ? reservationStates(choice.loaded.profile, { roots, release: config.hardware.release }) : undefined;
      if (ctx.json) {
        ctx.out(
          JSON.stringify(
            {
              board: choice.loaded ? { id: choice.loaded.profile.id, how: choice.how } : null,
              configured: configured ?? null,
              detail: choice.detail,
              deviceTreeModel: detection.deviceTreeModel,
              detected: detection.sbc ? { id: detection.sbc.profile.profile.id, prefix: detection.sbc.prefix, alsoMatched: detection.alsoMatched } : null,
              summary: detection.summary,
              memTotalMiB: detection.memTotalMiB,
              gpioChips: detection.chips,
              expectedChips: detection.expectedChips,
              reservations: reservations?.map((r) => ({ lines: r.reservation.lines, pins: r.reservation.pins ?? [], reason: r.reservation.reason, when: r.reservation.when, active: r.active, because: r.because, held: r.held, released: r.released })) ?? null,
              serial: detection.serial,
              skipped: registry.skipped,
            },
            null,
            2,
          ),
        );
      } else {
        renderDetection(detection, choice, configured, reservations).forEach((l) => ctx.out(l));
        reportSkipped(registry, ctx);
      }
      // A configured id nobody knows is a configuration error, as `config validate` says too.
      return choice.how === 'unknown' ? EXIT.config : EXIT.ok;
    }
  }
  throw new UsageError(`usage: ${USAGE}`);
}
