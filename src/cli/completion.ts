/**
 * Shell completion scripts for `invocache completion bash|zsh|fish`, built
 * from the command registry and each command's `--help` text, so a new
 * command or option is completed without touching this file.
 */
import type { CommandEntry } from "./command.js";

/** One command as completion sees it. */
export interface CompletionCommand {
  name: string;
  summary: string;
  options: CompletionOption[];
}

/** One `--option` of a command. */
export interface CompletionOption {
  /** Without the dashes: `store`. */
  long: string;
  /** The one-letter alias, without the dash, when there is one. */
  short?: string;
  /** Whether the option takes a value (`--store URL`). */
  value: boolean;
  description: string;
}

/** The shells `invocache completion` writes scripts for. */
export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];

const OPTION_LINE =
  /^\s+(?:-([a-zA-Z]), )?--([a-z][\w-]*)((?:[ =](?:[A-Z][\w=.|-]*|<[^>]+>))?)(?:\.\.\.)?(?:\s{2,}(.*))?$/;

/**
 * The options a command's `--help` lists (its "Options:" lines).
 *
 * @example
 * optionsFromHelp("Options:\n  --store URL   a store\n").map((o) => o.long) // ["store"]
 */
export function optionsFromHelp(help: string): CompletionOption[] {
  const out: CompletionOption[] = [];
  const seen = new Set<string>();
  for (const line of help.split("\n")) {
    const m = OPTION_LINE.exec(line);
    if (m === null || seen.has(m[2]!)) continue;
    seen.add(m[2]!);
    out.push({
      long: m[2]!,
      ...(m[1] === undefined ? {} : { short: m[1] }),
      value: m[3] !== "",
      description: (m[4] ?? "").trim(),
    });
  }
  if (!seen.has("help")) out.push({ long: "help", short: "h", value: false, description: "help" });
  return out;
}

/**
 * Every command with its options, loading each command module once.
 *
 * @example
 * const commands = await completionCommands(COMMANDS);
 */
export async function completionCommands(
  entries: readonly CommandEntry[],
): Promise<CompletionCommand[]> {
  const out: CompletionCommand[] = [];
  for (const entry of entries) {
    const command = await entry.load();
    out.push({ name: entry.name, summary: entry.summary, options: optionsFromHelp(command.help) });
  }
  return out;
}

/**
 * The completion script for `shell`.
 *
 * @example
 * completionScript("bash", commands) // "…complete -o default -F _invocache invocache\n"
 */
export function completionScript(shell: Shell, commands: readonly CompletionCommand[]): string {
  switch (shell) {
    case "bash":
      return bash(commands);
    case "zsh":
      return zsh(commands);
    case "fish":
      return fish(commands);
  }
}

const TOP = ["--help", "--version"];

function flags(c: CompletionCommand): string[] {
  return c.options.flatMap((o) => [
    `--${o.long}`,
    ...(o.short === undefined ? [] : [`-${o.short}`]),
  ]);
}

/** What a command's first argument completes to, besides files. */
function words(c: CompletionCommand, all: readonly CompletionCommand[]): string[] | undefined {
  if (c.name === "completion") return [...SHELLS];
  if (c.name === "help") return all.map((x) => x.name);
  return undefined;
}

function bash(commands: readonly CompletionCommand[]): string {
  const names = commands.map((c) => c.name);
  const cases = commands
    .map((c) => {
      const w = words(c, commands);
      return `    ${c.name}) opts="${flags(c).join(" ")}"${w === undefined ? "" : `; args="${w.join(" ")}"`} ;;`;
    })
    .join("\n");
  return `# bash completion for invocache. Load it with
#   source <(invocache completion bash)
# or save it as ~/.local/share/bash-completion/completions/invocache
_invocache() {
  local cur=\${COMP_WORDS[COMP_CWORD]} opts="" args=""
  COMPREPLY=()
  if (( COMP_CWORD == 1 )); then
    COMPREPLY=( $(compgen -W "${[...names, "help", ...TOP].join(" ")}" -- "$cur") )
    return 0
  fi
  case \${COMP_WORDS[1]} in
${cases}
    help) args="${names.join(" ")}" ;;
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
  elif [[ -n $args ]] && (( COMP_CWORD == 2 )); then
    COMPREPLY=( $(compgen -W "$args" -- "$cur") )
  fi
  # Nothing matched: -o default completes file names.
  return 0
}
complete -o default -F _invocache invocache
`;
}

/** A zsh single-quoted word. */
function zq(text: string): string {
  return `'${text.replace(/'/g, "'\\''")}'`;
}

function zsh(commands: readonly CompletionCommand[]): string {
  const described = commands.map((c) => `    ${zq(`${c.name}:${c.summary}`)}`).join("\n");
  const cases = commands
    .map((c) => {
      const w = words(c, commands);
      const opts = c.options
        .map((o) => zq(`--${o.long}:${o.description.replace(/\s+/g, " ")}`))
        .join(" ");
      return `    ${c.name})\n      opts=(${opts})${w === undefined ? "" : `\n      args=(${w.join(" ")})`}\n      ;;`;
    })
    .join("\n");
  return `#compdef invocache
# zsh completion for invocache. Load it with
#   source <(invocache completion zsh)     (after compinit)
# or save it as _invocache in a folder of your $fpath
_invocache() {
  local -a cmds opts args
  cmds=(
${described}
    'help:the help of a command'
  )
  if (( CURRENT == 2 )); then
    if [[ \${words[CURRENT]} == -* ]]; then
      compadd -- ${TOP.join(" ")}
    else
      _describe -t commands 'invocache command' cmds
    fi
    return
  fi
  case \${words[2]} in
${cases}
    help)
      _describe -t commands 'invocache command' cmds
      return
      ;;
  esac
  if [[ \${words[CURRENT]} == -* ]]; then
    _describe -t options 'option' opts
  elif (( CURRENT == 3 && \${#args} > 0 )); then
    compadd -a args
  else
    _files
  fi
}
if [[ \${zsh_eval_context[-1]} == loadautofunc ]]; then
  _invocache "$@"
else
  compdef _invocache invocache
fi
`;
}

/** A fish single-quoted word. */
function fq(text: string): string {
  return `'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
}

function fish(commands: readonly CompletionCommand[]): string {
  const names = commands.map((c) => c.name).join(" ");
  const lines = [
    "# fish completion for invocache. Load it with",
    "#   invocache completion fish | source",
    "# or save it as ~/.config/fish/completions/invocache.fish",
    `complete -c invocache -n '__fish_use_subcommand' -l help -s h -d 'every command'`,
    `complete -c invocache -n '__fish_use_subcommand' -l version -s v -d 'the version'`,
    `complete -c invocache -n '__fish_use_subcommand' -f -a help -d 'the help of a command'`,
    `complete -c invocache -n '__fish_seen_subcommand_from help' -f -a ${fq(names)}`,
  ];
  for (const c of commands) {
    lines.push(
      `complete -c invocache -n '__fish_use_subcommand' -f -a ${c.name} -d ${fq(c.summary)}`,
    );
    const when = `'__fish_seen_subcommand_from ${c.name}'`;
    const w = words(c, commands);
    if (w !== undefined) lines.push(`complete -c invocache -n ${when} -f -a ${fq(w.join(" "))}`);
    for (const o of c.options) {
      lines.push(
        `complete -c invocache -n ${when} -l ${o.long}${o.short === undefined ? "" : ` -s ${o.short}`}${o.value ? " -r" : ""} -d ${fq(o.description || o.long)}`,
      );
    }
  }
  return `${lines.join("\n")}\n`;
}
