import { Command, type Option } from 'commander';
import * as gql from '../documents.js';
import { usageError } from '../errors.js';
import { loadConfig, pages, type CommandContext, type Page } from './context.js';

/**
 * Completion scripts stay thin: the shell hands the words typed so far to the hidden
 * `kfleet __complete`, which walks the same command tree that parses them, so the completions
 * can never disagree with the commands, flags and choices that exist.
 */
const BASH = `# kfleet bash completion. Load it with:  source <(kfleet completion bash)
_kfleet() {
  local cur="\${COMP_WORDS[COMP_CWORD]}"
  local IFS=$'\\n'
  COMPREPLY=( $(compgen -W "$(kfleet __complete "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)" -- "$cur") )
}
complete -o default -F _kfleet kfleet
`;

const ZSH = `#compdef kfleet
# kfleet zsh completion. Load it with:  source <(kfleet completion zsh)
_kfleet() {
  local -a completions
  completions=(\${(f)"$(kfleet __complete "\${(@)words[2,$CURRENT]}" 2>/dev/null)"})
  if (( \${#completions} )); then
    compadd -- $completions
  else
    _files
  fi
}
if (( ! $+functions[compdef] )); then
  autoload -Uz compinit && compinit
fi
compdef _kfleet kfleet
`;

const visibleCommands = (cmd: Command): Command[] =>
  cmd.commands.filter((c) => !(c as Command & { _hidden?: boolean })._hidden);

const allOptions = (cmd: Command): Option[] => {
  const options: Option[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) options.push(...c.options);
  return options.filter((o) => !o.hidden);
};

const findOption = (cmd: Command, flag: string): Option | undefined =>
  allOptions(cmd).find((o) => o.long === flag || o.short === flag);

const takesValue = (o: Option | undefined): boolean => Boolean(o && (o.required || o.optional));

export interface CompletionRequest {
  command: Command;
  /** The option whose value is being typed, if any. */
  valueFor?: Option;
  /** The positional argument being typed (its name), if any. */
  argument?: string;
  current: string;
  globals: { api?: string; token?: string; context?: string };
}

/** Where the cursor is: which command, and whether an option value or an argument is typed. */
export function locate(program: Command, words: readonly string[]): CompletionRequest {
  let command = program;
  let positional = 0;
  const globals: CompletionRequest['globals'] = {};
  const typed = words.slice(0, -1);
  const current = words.at(-1) ?? '';
  for (let i = 0; i < typed.length; i++) {
    const word = typed[i]!;
    if (word.startsWith('-')) {
      const [flag, inline] = word.split('=', 2) as [string, string | undefined];
      const option = findOption(command, flag);
      const value = inline ?? (takesValue(option) ? typed[++i] : undefined);
      if (option?.long === '--api' || option?.long === '--token' || option?.long === '--context')
        globals[option.long.slice(2) as 'api' | 'token' | 'context'] = value;
      continue;
    }
    const sub = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (sub && positional === 0) {
      command = sub;
      continue;
    }
    positional++;
  }
  const previous = typed.at(-1);
  if (previous?.startsWith('-') && !previous.includes('=')) {
    const option = findOption(command, previous);
    if (takesValue(option)) return { command, valueFor: option!, current, globals };
  }
  const argument = command.registeredArguments[positional];
  const variadic = command.registeredArguments.at(-1);
  const name = argument?.name() ?? (variadic?.variadic ? variadic.name() : undefined);
  return { command, ...(name ? { argument: name } : {}), current, globals };
}

/** `kfleet completion bash|zsh` and the hidden `kfleet __complete <words...>`. */
export function addCompletionCommands(program: Command, context: CommandContext): void {
  const { io, connect } = context;

  program
    .command('completion')
    .description('print the shell completion script (commands, flags, cluster names from the API)')
    .argument('<shell>', 'bash or zsh')
    .action((shell: string) => {
      if (shell === 'bash') io.stdout(BASH);
      else if (shell === 'zsh') io.stdout(ZSH);
      else throw usageError(`${shell}: expected bash or zsh`, '<shell>');
    });

  program
    .command('__complete', { hidden: true })
    .description('completions for the words typed so far (used by the completion scripts)')
    .argument('[words...]')
    .allowUnknownOption()
    .helpOption(false)
    .action(async (words: string[] = []) => {
      const where = locate(program, words.length ? words : ['']);
      const candidates = await complete(where);
      const matching = candidates.filter((c) => c.startsWith(where.current));
      io.stdout(matching.map((c) => `${c}\n`).join(''));
    });

  async function complete(where: CompletionRequest): Promise<string[]> {
    const { command, valueFor, argument, current } = where;
    if (valueFor) {
      if (valueFor.argChoices) return valueFor.argChoices;
      if (valueFor.long === '--context') return contextNames();
      return [];
    }
    if (current.startsWith('-'))
      return allOptions(command).flatMap((o) => (o.long ? [o.long] : []));
    const subcommands = visibleCommands(command);
    if (subcommands.length) return subcommands.map((c) => c.name());
    if (argument === 'cluster') return clusterNames(where);
    if (argument === 'shell') return ['bash', 'zsh'];
    if (argument === 'name' && command.name() === 'use-context') return contextNames();
    if (argument === 'name' && command.name() === 'delete-context') return contextNames();
    return [];
  }

  async function contextNames(): Promise<string[]> {
    try {
      return (await loadConfig(io)).config.contexts.map((c) => c.name);
    } catch {
      return [];
    }
  }

  /** Cluster names from the API; completion never prints an error into the command line. */
  async function clusterNames(where: CompletionRequest): Promise<string[]> {
    const probe = new Command('kfleet')
      .option('--api <url>')
      .option('--token <token>')
      .option('--context <name>');
    probe.setOptionValue('api', where.globals.api);
    probe.setOptionValue('token', where.globals.token);
    probe.setOptionValue('context', where.globals.context);
    const request = connect(probe);
    const names: string[] = [];
    try {
      for await (const nodes of pages<{ name: string }, { clusters: Page<{ name: string }> }>(
        request,
        gql.FIND_CLUSTERS_BY_NAME,
        where.current ? { filter: { nameContains: where.current } } : {},
        (d) => d.clusters,
      )) {
        names.push(...nodes.map((n) => n.name));
        if (names.length >= 1000) break;
      }
    } catch {
      return [];
    }
    return names;
  }
}
