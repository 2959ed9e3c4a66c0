import { InvocacheError } from "../errors.js";

/** Why a source could not be located: the given text is wrong, the path is missing, or it cannot be read. */
export type SourceProblemKind = "invalid" | "missing" | "unreadable";

/**
 * A store URL, cassette file or cassette folder that cannot be used as a
 * source. `field` names what was given (`--store`, `store`, …) and the
 * message ends with the fix.
 *
 * @example
 * locateSource("nope.txt") // SourceError: pass a store URL (sqlite://…), a cassette file (.yaml) or a folder of cassettes
 */
export class SourceError extends InvocacheError {
  /** What was given, as the caller named it (`--store`, `store`…). */
  readonly field: string;
  readonly problem: SourceProblemKind;
  /** The path involved, when there is one. */
  readonly path: string | undefined;

  constructor(
    field: string,
    problem: SourceProblemKind,
    message: string,
    options: { path?: string; cause?: unknown } = {},
  ) {
    super(
      problem === "unreadable" ? "ERR_UNREADABLE" : "ERR_SOURCE",
      message,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.field = field;
    this.problem = problem;
    this.path = options.path;
  }
}
