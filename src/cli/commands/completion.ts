/**
 * `invocache completion bash|zsh|fish`: print a shell completion script.
 */
import { parseCommandArgs } from "../args.js";
import type { Command } from "../command.js";
import { completionCommands, completionScript, SHELLS, type Shell } from "../completion.js";
import { EXIT, UsageError } from "../errors.js";
import { COMMANDS } from "./index.js";

/**
 * @example
 * // source <(invocache completion bash)
 */
export const completionCommand: Command = {
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
    io.out(completionScript(shell as Shell, await completionCommands(COMMANDS)));
    return EXIT.ok;
  },
};
