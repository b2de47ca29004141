// `pinclaw skills list | install SRC [--enable] [--force] | enable NAME | disable NAME | remove NAME`
// (src/skills/). An install shows what it would write (each file, its size, which are scripts, the
// tools the skill asks for) and asks before writing; enabling shows the tools again and asks. --yes
// answers both; without a terminal and without --yes nothing is changed. In the bundle this is part
// of the lazy chunk 'ops-cli'.
import { PinclawError, UsageError } from '../errors.js';
import { findSkill, listSkills, planInstall, removeSkill, setEnabled, writeInstall, type InstallPlan } from '../skills/install.js';
import { readSkillSource } from '../skills/source.js';
import { parseCommandArgs } from './args.js';
import { formatBytes } from './backup-command.js';
import { skillsOptions } from './options.js';
import { terminalAsk, type Ask } from './confirm.js';
import type { CliContext } from './context.js';
import { stdinIsTerminal } from './terminal.js';

const USAGE: Record<string, string> = {
  list: 'pinclaw skills list [--json]',
  install: 'pinclaw skills install SRC [--enable] [--force] [--yes]   (SRC: a directory, a .tar.gz or .zip file, or an https URL)',
  enable: 'pinclaw skills enable NAME [--yes]',
  disable: 'pinclaw skills disable NAME',
  remove: 'pinclaw skills remove NAME [--yes]',
};
const ARGS: Record<string, number> = { list: 0, install: 1, enable: 1, disable: 1, remove: 1 };

/** Yes from --yes or from the owner at a terminal; without either, a refusal that says how to go on. */
async function confirmed(ctx: CliContext, question: string, ask: Ask | undefined): Promise<boolean> {
  if (ctx.yes) return true;
  if (!ask) throw new PinclawError(`${question.replace(/\?.*$/s, '')}: needs your confirmation, and there is no terminal to ask at; run it again with --yes`);
  return /^\s*y(es)?\s*$/i.test(await ask(`${question} [y/N] `));
}

const toolsLine = (tools: string[]) => (tools.length ? `asks for the tools: ${tools.join(', ')}` : 'asks for no tools');

function showPlan(plan: InstallPlan, ctx: CliContext, enable: boolean): void {
  const m = plan.manifest;
  const scripts = plan.files.filter((f) => f.script);
  ctx.out(`skill ${m.name}: ${m.description}`);
  ctx.out(`  ${toolsLine(m.tools)}`);
  ctx.out(`  ${plan.files.length} file${plan.files.length === 1 ? '' : 's'}, ${formatBytes(plan.bytes)}; ${scripts.length ? `${scripts.length} script${scripts.length === 1 ? '' : 's'}` : 'no scripts'}:`);
  const width = Math.max(...plan.files.map((f) => formatBytes(f.size).length));
  for (const f of [...plan.files].sort((a, b) => a.path.localeCompare(b.path))) {
    ctx.out(`    ${formatBytes(f.size).padStart(width)}  ${f.path}${f.script ? `  [script${f.executable ? ', executable' : ''}]` : ''}`);
  }
  ctx.out(`  into ${plan.dest}${plan.exists ? ' (replacing the skill there)' : ''}, ${enable ? 'enabled' : 'disabled (pinclaw skills enable ' + m.name + ' turns it on)'}`);
}

export async function runSkills(sub: string, rawArgs: string[], ctx: CliContext, ask: Ask | undefined = stdinIsTerminal() ? terminalAsk : undefined): Promise<number> {
  const usage = USAGE[sub]!;
  const { values, positionals } = parseCommandArgs(rawArgs, skillsOptions, usage);
  if (positionals.length !== ARGS[sub]) throw new UsageError(`expected ${ARGS[sub] === 0 ? 'no argument' : 'one argument'}, got ${positionals.length}\nusage: ${usage}`);
  if ((values.enable || values.force) && sub !== 'install') throw new UsageError(`--enable and --force belong to install\nusage: ${usage}`);
  const workspace = ctx.paths.workspace;
  const arg = positionals[0]!;
  switch (sub) {
    case 'list': {
      const skills = listSkills(workspace);
      if (ctx.json) {
        ctx.out(JSON.stringify(skills.map((s) => ({ name: s.name, enabled: s.enabled, description: s.manifest?.description, tools: s.manifest?.tools ?? [], problem: s.problem })), null, 2));
      } else if (!skills.length) ctx.out(`no skills in ${workspace}/skills (pinclaw skills install SRC adds one)`);
      else {
        for (const s of skills) {
          const tools = s.manifest?.tools.length ? `  [tools: ${s.manifest.tools.join(', ')}]` : '';
          ctx.out(`${s.name}\t${s.enabled ? 'enabled' : 'disabled'}\t${s.manifest ? s.manifest.description : `invalid: ${s.problem}`}${tools}`);
        }
      }
      return 0;
    }
    case 'install': {
      const enable = values.enable === true;
      const plan = planInstall(workspace, await readSkillSource(arg, process.cwd()));
      if (plan.exists && values.force !== true) throw new PinclawError(`a skill named ${plan.manifest.name} is installed already (${plan.dest}); add --force to replace it`);
      if (!ctx.json) showPlan(plan, ctx, enable);
      if (!(await confirmed(ctx, `install ${plan.manifest.name}?`, ask))) {
        ctx.err('pinclaw: not installed');
        return 1;
      }
      writeInstall(plan, { enable, force: values.force === true });
      if (ctx.json) {
        const m = plan.manifest;
        ctx.out(JSON.stringify({ name: m.name, description: m.description, tools: m.tools, enabled: enable, dir: plan.dest, files: plan.files.map((f) => ({ path: f.path, size: f.size, script: f.script })) }, null, 2));
      } else ctx.out(`installed ${plan.manifest.name} (${enable ? 'enabled' : 'disabled'})`);
      return 0;
    }
    case 'enable': {
      const skill = findSkill(workspace, arg);
      if (!skill.manifest) throw new PinclawError(`${skill.name} cannot be enabled: ${skill.problem}`);
      if (skill.enabled) {
        ctx.out(`${skill.name} is enabled already (${toolsLine(skill.manifest.tools)})`);
        return 0;
      }
      ctx.out(`skill ${skill.name}: ${skill.manifest.description}`);
      ctx.out(`  ${toolsLine(skill.manifest.tools)}`);
      if (!(await confirmed(ctx, `enable ${skill.name}? its summary goes into the prompt and the agent may follow it`, ask))) {
        ctx.err('pinclaw: not enabled');
        return 1;
      }
      setEnabled(skill, true);
      ctx.out(`enabled ${skill.name}`);
      return 0;
    }
    case 'disable': {
      const skill = findSkill(workspace, arg);
      setEnabled(skill, false);
      ctx.out(skill.enabled ? `disabled ${skill.name}` : `${skill.name} was disabled already`);
      return 0;
    }
    case 'remove': {
      const skill = findSkill(workspace, arg);
      if (!(await confirmed(ctx, `remove ${skill.name} (${skill.dir}) and all its files?`, ask))) {
        ctx.err('pinclaw: not removed');
        return 1;
      }
      removeSkill(skill);
      ctx.out(`removed ${skill.name}`);
      return 0;
    }
  }
  throw new UsageError(`unknown subcommand ${sub}`);
}
