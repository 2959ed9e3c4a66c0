/**
 * `invocache id <request|->`: the identity of an invocation, and with
 * `--manifest` the exact bytes that were hashed.
 */
import { hashArtifact, IDENTITY_DOMAIN_V1, manifestBytes, shortId } from "../../identity/index.js";
import { callKind } from "../../identity/internal.js";
import { integerOption, parseCommandArgs } from "../args.js";
import { type Command, printJson } from "../command.js";
import { EXIT, UsageError } from "../errors.js";
import { label, readDocument } from "../input.js";
import { invocationFromDocument } from "../invocation.js";

const OPTIONS = {
  manifest: { type: "boolean" },
  attempt: { type: "string" },
  input: { type: "string", multiple: true },
} as const;

/**
 * @example
 * // invocache id request.json --attempt 1
 */
export const idCommand: Command = {
  name: "id",
  help: `Usage: invocache id <request.json|request.yaml|-> [--manifest] [--attempt N] [--input FILE]... [--json]

Print the identity (64 hex) and the short id (12 hex) of an invocation: the
same digest the cache, cassettes, miss reports and stamps use.

The file (JSON or YAML; - reads stdin) holds one of:
  { "request": { "role", "prompt", "model"?, "task"?, "projectPath"?, "params"? },
    "options": { "attempt"?, "inputArtifactHashes"?, "homeDir"?, "tmpDirs"?, "roots"? } }
  a bare request { "role", "prompt", … }        attempt 0, no input artifacts
  a manifest { attempt, inputs, model, prompt, role, task, params? }, or a
  stored entry: its identity is recomputed

Options:
  --manifest      print the exact pre-image: "invocache/invocation/v1\\n" then the
                  canonical JSON (RFC 8785) of the manifest, byte for byte, with no
                  trailing newline, so \`invocache id --manifest r.json | sha256sum\`
                  prints the identity
  --attempt N     retry number of the step (overrides options.attempt)
  --input FILE    hash FILE (sha256) and add it to the input artifacts; repeatable
  --json          {"id", "shortId", "kind", "manifest"} (with --manifest also "preimage")
  -h, --help      this help

Examples:
  invocache id request.json
  echo '{"role":"planner","model":"gpt-5","prompt":"Plan the app"}' | invocache id -
  invocache id request.yaml --attempt 1 --input spec.md
  invocache id request.json --manifest | sha256sum
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs("id", argv, OPTIONS, {
      min: 1,
      max: 1,
      names: "<request file or ->",
    });
    const path = positionals[0]!;
    const attempt =
      values.attempt === undefined ? undefined : integerOption("attempt", values.attempt);
    const inputs: string[] = [];
    for (const file of values.input ?? []) {
      try {
        inputs.push(await hashArtifact(file));
      } catch (error) {
        throw new UsageError(`--input ${file}: cannot read it (${(error as Error).message})`, {
          cause: error,
        });
      }
    }
    const doc = await readDocument(path, io);
    const inv = invocationFromDocument(doc, label(path), { attempt, inputs });
    const preimage = (): Uint8Array => {
      const tag = new TextEncoder().encode(IDENTITY_DOMAIN_V1);
      const body = manifestBytes(inv.manifest);
      const out = new Uint8Array(tag.length + body.length);
      out.set(tag, 0);
      out.set(body, tag.length);
      return out;
    };
    if (values.json) {
      printJson(io, {
        id: inv.id,
        shortId: shortId(inv.id),
        kind: inv.kind,
        manifest: inv.manifest,
        ...(values.manifest ? { preimage: Buffer.from(preimage()).toString("utf8") } : {}),
      });
      return EXIT.ok;
    }
    if (values.manifest) {
      io.out(preimage());
      return EXIT.ok;
    }
    const m = inv.manifest;
    const model = callKind(m).model(m);
    io.out(`${inv.id}\n`);
    io.out(
      io.style.dim(
        `short ${shortId(inv.id)} · role ${m.role}${model === "" ? "" : ` · model ${model}`} · attempt ${m.attempt}${m.inputs.length > 0 ? ` · ${m.inputs.length} input${m.inputs.length === 1 ? "" : "s"}` : ""}\n`,
      ),
    );
    return EXIT.ok;
  },
};
