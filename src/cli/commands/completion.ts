/**
 * `invocache completion bash|zsh|fish`: print a shell completion script.
 */
import { parseCommandArgs } from "../args.js";
import type { Command, CommandEntry } from "../command.js";
import { completionCommands, completionScript, SHELLS, type Shell } from "../completion.js";
import { EXIT, UsageError } from "../errors.js";

/**
 * The command, completing the commands of `registry`: the registry hands
 * itself in (no import back from here, so no cycle).
 *
 * @example
 * // source <(invocache completion bash)
 */
export const completionCommandFor = (registry: readonly CommandEntry[]): Command => ({
  name: "completion",
  help: `Usage: invocache completion <bash|zsh|fish>

Print a script that completes invocache's commands and options in your shell.

Options:
  -h, --help         this help

Examples:
  source <(invocache completion bash)          # this shell; add it to ~/.bashrc to keep it
  invocache completion bash > ~/.local/share/bash-completion/completions/invocache
  source <(invocache completion zsh)           # after compinit, e.g. in ~/.zshrc
  invocache completion fish > ~/.config/fish/completions/invocache.fish
`,
  async run(argv, io) {
    const { positionals } = parseCommandArgs(
      "completion",
      argv,
      {},
      {
        min: 1,
        max: 1,
        names: "<shell> (bash, zsh or fish)",
      },
    );
    const shell = positionals[0]!;
    if (!(SHELLS as readonly string[]).includes(shell)) {
      throw new UsageError(
        `completion: unknown shell ${JSON.stringify(shell)}; pass one of ${SHELLS.join(", ")}`,
      );
    }
    io.out(completionScript(shell as Shell, await completionCommands(registry)));
    return EXIT.ok;
  },
});
