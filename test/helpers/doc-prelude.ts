/**
 * What the code blocks of docs/recorder.md and docs/integrations.md leave to
 * the reader, made real: a fake model vendor on loopback (the SDKs find it
 * through their usual environment variables), a recorder, a request, a
 * model call, a gate… as globals, so each block runs exactly as written.
 */
import { writeFileSync } from "node:fs";
import OpenAI from "openai";
import { sseEvents } from "../../src/adapters/sse.js";
import {
  createFetch,
  createRecorder,
  hashArtifact,
  type Recorder,
  ReplayMissError,
  withInvocation,
} from "../../src/index.js";
import { type FakeProvider, startFakeProvider } from "../fake-provider/index.js";

let provider: FakeProvider | undefined;
let recorder: Recorder | undefined;

export async function setup(): Promise<void> {
  provider = await startFakeProvider();
  Object.assign(process.env, {
    OPENAI_BASE_URL: `${provider.url}/v1`,
    OPENAI_API_KEY: "sk-doc-test",
    ANTHROPIC_BASE_URL: provider.url,
    ANTHROPIC_API_KEY: "sk-ant-doc-test",
    INVOCACHE_STORE: "memory://",
  });
  writeFileSync("spec.md", "# Spec\n");
  recorder = createRecorder({ store: "memory://", mode: "auto" });
  // The reader's client, plain, and the same client recording through the recorder.
  const client = new OpenAI();
  const openai = new OpenAI({ fetch: createFetch({ recorder }) });
  const messages = [{ role: "user" as const, content: "Write the build plan" }];
  const req = { role: "builder", model: "gpt-5", prompt: "Build the app", task: "T-1" };
  const model = async () => client.chat.completions.create({ model: "gpt-5", messages });
  const log = Object.assign((..._args: unknown[]) => {}, {
    debug: (..._args: unknown[]) => {},
    warn: (..._args: unknown[]) => {},
    error: (..._args: unknown[]) => {},
  });
  Object.assign(globalThis, {
    // invocache names a block uses without importing them
    createRecorder,
    createFetch,
    hashArtifact,
    sseEvents,
    ReplayMissError,
    withInvocation,
    OpenAI,
    recorder,
    // the reader's own program
    openai,
    client,
    messages,
    system: "You review diffs.",
    prompt: "Build the app",
    task: "T-1",
    attempt: 0,
    projectPath: process.cwd(),
    checkout: process.cwd(),
    inputArtifactHashes: [await hashArtifact("spec.md")],
    req,
    model,
    fn: model,
    gate: () => ({ verdict: "accepted", reason: "the tests pass" }),
    queue: { add: <T>(job: () => Promise<T>) => job() },
    pipelineStep: () => recorder?.call({ ...req, prompt: "Step" }, model),
    log,
    ticket: { id: "TICKET-1", text: "The app crashes on start" },
    myModelClient: { label: async (text: string) => (text.includes("crash") ? "bug" : "other") },
    url: `${provider.url}/v1/chat/completions`,
    init: {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-doc-test" },
      body: JSON.stringify({ model: "gpt-5", messages, stream: true }),
    },
  });
}

export async function teardown(): Promise<void> {
  await recorder?.close();
  await provider?.close();
}
