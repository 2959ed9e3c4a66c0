/**
 * The invocation context: the agent step's role, task, attempt, project root
 * and input artifacts, carried from the step to the model call on
 * AsyncLocalStorage. None of these are in an SDK's HTTP body, and threading
 * them through user code is what users will not do; every translator (the
 * adapters, the integrations, the tool wrappers) reads them from here.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { InvocationRequest, ToolInvocationRequest } from "../identity/index.js";
import type { CallOptions, ToolPolicy } from "../recorder/index.js";

/** What a step says about the model calls made inside it. Every field is optional. */
export interface InvocationContext {
  /** Agent role: planner, builder, reviewer… Outside any scope: `"default"`. */
  role?: string | undefined;
  /** The task the step works on (normalized before hashing). */
  task?: string | null | undefined;
  /**
   * Retry number of the step, integer >= 0. Outside any scope: 0. A retry
   * after a gate rejection must bump it: attempt is part of the identity, so
   * the retry can never be served the rejected output (RELOOP layer 1).
   */
  attempt?: number | undefined;
  /** Run-scoped project root: becomes `{project}` in the prompt and task. */
  projectPath?: string | null | undefined;
  /** Hashes of the step's input artifacts (`hashArtifact`); order does not matter. */
  inputArtifactHashes?: readonly string[] | undefined;
}

/** The context in effect, with defaults filled in. */
export interface ResolvedInvocation {
  role: string;
  task: string | null;
  attempt: number;
  projectPath: string | null;
  inputArtifactHashes: readonly string[];
}

/** Role used by adapters outside any `withInvocation` scope. */
export const DEFAULT_ROLE = "default";

const storage = new AsyncLocalStorage<InvocationContext>();

/**
 * Run `fn` with an invocation context: every model call an adapter sees
 * inside `fn` (including in promises and callbacks it starts) gets this role,
 * task, attempt, project root and input artifacts. Scopes nest and merge
 * field by field, the inner one winning; a field left `undefined` is
 * inherited. Returns what `fn` returns.
 *
 * @throws TypeError naming the field when a value is malformed.
 * @example
 * for (let attempt = 0; attempt < 3; attempt++) {
 *   const draft = await withInvocation({ role: "builder", task, attempt }, () =>
 *     openai.chat.completions.create({ model: "gpt-5", messages }),
 *   );
 *   if (gate(draft)) break; // rejected: the next attempt is a new identity
 * }
 */
export function withInvocation<T>(ctx: InvocationContext, fn: () => T): T {
  if (typeof fn !== "function") throw new TypeError("withInvocation: fn must be a function");
  const merged: InvocationContext = { ...storage.getStore() };
  for (const [key, value] of Object.entries(checkContext(ctx))) {
    if (value !== undefined) (merged as Record<string, unknown>)[key] = value;
  }
  return storage.run(merged, fn);
}

/**
 * The invocation context in effect here, defaults filled in: role
 * `"default"`, attempt 0, no task, no project root, no input artifacts.
 *
 * @example
 * withInvocation({ role: "planner" }, () => currentInvocation().role); // "planner"
 * currentInvocation().attempt; // 0 outside any scope
 */
export function currentInvocation(): ResolvedInvocation {
  const ctx = storage.getStore() ?? {};
  return {
    role: ctx.role ?? DEFAULT_ROLE,
    task: ctx.task ?? null,
    attempt: ctx.attempt ?? 0,
    projectPath: ctx.projectPath ?? null,
    inputArtifactHashes: ctx.inputArtifactHashes ?? [],
  };
}

/** The fields set explicitly by the enclosing scopes (no defaults). */
export function explicitInvocation(): Readonly<InvocationContext> {
  return storage.getStore() ?? {};
}

/**
 * What an adapter knows about a call from the SDK's side. Give `prompt` (text)
 * or `conversation` (the messages as JSON, as the SDK sent them): the
 * identity normalizes either itself; an adapter never pre-normalizes.
 */
export interface CallDescription {
  prompt?: string | undefined;
  /** The conversation as JSON (see `InvocationRequest.conversation`), used when `prompt` is absent. */
  conversation?: unknown;
  model?: string | null | undefined;
  params?: Record<string, unknown> | undefined;
  /** Role when no enclosing `withInvocation` sets one. Default `"default"`. */
  role?: string | undefined;
}

/**
 * Build the `recorder.call` arguments for a call made here: `role`, `task`
 * and `projectPath` from the context go into the request, `attempt` and
 * `inputArtifactHashes` into the call options. This is how every adapter
 * turns an SDK call into an invocation; custom adapters can use it too.
 *
 * @example
 * const [req, opts] = invocationCall({ prompt, model: "gpt-5", params: { temperature: 0 } });
 * await recorder.call(req, () => callTheModel(prompt), opts);
 */
export function invocationCall(call: CallDescription): [InvocationRequest, CallOptions] {
  const ctx = storage.getStore() ?? {}; // read once per call
  const req: InvocationRequest = {
    role: ctx.role ?? call.role ?? DEFAULT_ROLE,
    model: call.model ?? null,
    task: ctx.task ?? null,
    projectPath: ctx.projectPath ?? null,
  };
  if (call.prompt !== undefined || call.conversation === undefined) req.prompt = call.prompt ?? "";
  else req.conversation = call.conversation;
  if (call.params !== undefined) req.params = call.params;
  const opts: CallOptions = { attempt: ctx.attempt ?? 0 };
  const inputs = ctx.inputArtifactHashes ?? [];
  if (inputs.length > 0) opts.inputArtifactHashes = inputs;
  return [req, opts];
}

/** A tool call (a function tool, an MCP request) as a tool translator describes it. */
export interface ToolCallDescription {
  name: string;
  /** MCP server name, or "" for a plain function tool. */
  server: string;
  method: ToolInvocationRequest["method"];
  args: Record<string, unknown> | undefined;
  argRules?: ToolInvocationRequest["argRules"];
  /** Side-effect hints, already checked by the translator (`checkToolPolicy`). */
  policy: ToolPolicy | undefined;
  signal?: AbortSignal | undefined;
}

/**
 * The `recorder.call` arguments for a tool call made here: the same
 * context as {@link invocationCall} (role, task and project root into the
 * request; attempt and inputs into the options), plus the tool's policy and
 * abort signal. The tool wrappers' half of the one translator contract.
 *
 * @example
 * const [req, opts] = toolInvocationCall({ name: "search", server: "docs", method: "tools/call", args: { q }, policy: undefined });
 * await recorder.call(req, () => search(q), opts);
 */
export function toolInvocationCall(
  call: ToolCallDescription,
): [ToolInvocationRequest, CallOptions] {
  const ctx = currentInvocation();
  const req: ToolInvocationRequest = {
    kind: "tool",
    name: call.name,
    server: call.server,
    method: call.method,
    args: call.args ?? null,
    ...(call.argRules === undefined ? {} : { argRules: call.argRules }),
    role: ctx.role,
    task: ctx.task,
    projectPath: ctx.projectPath,
  };
  const opts: CallOptions = {
    attempt: ctx.attempt,
    ...(ctx.inputArtifactHashes.length > 0 ? { inputArtifactHashes: ctx.inputArtifactHashes } : {}),
    ...(call.signal === undefined ? {} : { signal: call.signal }),
    ...(call.policy === undefined ? {} : { tool: call.policy }),
  };
  return [req, opts];
}

function checkContext(ctx: InvocationContext): InvocationContext {
  if (ctx === null || typeof ctx !== "object") {
    throw new TypeError(
      "withInvocation: ctx must be an object like { role?, task?, attempt?, projectPath?, inputArtifactHashes? }",
    );
  }
  const { role, task, attempt, projectPath, inputArtifactHashes } = ctx;
  if (role !== undefined && (typeof role !== "string" || role === "")) {
    throw new TypeError(`withInvocation: role must be a non-empty string, got ${show(role)}`);
  }
  if (task !== undefined && task !== null && typeof task !== "string") {
    throw new TypeError(`withInvocation: task must be a string or null, got ${show(task)}`);
  }
  if (
    attempt !== undefined &&
    (typeof attempt !== "number" || !Number.isSafeInteger(attempt) || attempt < 0)
  ) {
    throw new TypeError(
      `withInvocation: attempt must be an integer >= 0 (0 for the first try), got ${show(attempt)}`,
    );
  }
  if (projectPath !== undefined && projectPath !== null && typeof projectPath !== "string") {
    throw new TypeError(
      `withInvocation: projectPath must be a string path or null, got ${show(projectPath)}`,
    );
  }
  if (inputArtifactHashes !== undefined) {
    if (
      !Array.isArray(inputArtifactHashes) ||
      inputArtifactHashes.some((h) => typeof h !== "string")
    ) {
      throw new TypeError(
        "withInvocation: inputArtifactHashes must be an array of strings (e.g. from hashArtifact())",
      );
    }
  }
  // A copy: later mutation of the caller's object or array must not change the scope.
  return {
    role,
    task,
    attempt,
    projectPath,
    inputArtifactHashes: inputArtifactHashes === undefined ? undefined : [...inputArtifactHashes],
  };
}

function show(v: unknown): string {
  return typeof v === "string" ? JSON.stringify(v) : v === null ? "null" : typeof v;
}
