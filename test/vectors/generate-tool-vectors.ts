/**
 * Writes test/vectors/identity-tool-v1.json, the golden vectors of the tool
 * identity recipe (docs/identity.md, "Tool identities"). Run it by hand, only
 * when adding vectors:
 *
 *   npx tsx test/vectors/generate-tool-vectors.ts
 *
 * The committed JSON is the truth: tests compare the implementation with it
 * and the Python script (verify_identity_vectors.py) reproduces every id from
 * its manifest. Changing an existing id means a new recipe version.
 * Written ASCII-only (non-ASCII as \uXXXX escapes), like identity-v1.json.
 */
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { IdentityOptions } from "../../src/identity/manifest.js";
import {
  type ToolInvocationRequest,
  toolIdentity,
  toolManifest,
} from "../../src/identity/tool-manifest.js";
import { IDENTITY_SECRETS } from "../../src/normalize/secrets-rule.js";
import { createSecretScanner } from "../../src/secrets/redact.js";

const PINNED = { homeDir: "/home/alice", tmpDirs: ["/tmp"] } as const;

interface Case {
  name: string;
  request: ToolInvocationRequest;
  options: IdentityOptions;
  /** Run with the default identity secret scanner (no env values). */
  secrets?: boolean;
}

const H = {
  a: "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
  b: "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
};

const cases: Case[] = [
  {
    name: "tool-function-plain",
    request: { kind: "tool", name: "add", args: { a: 2, b: 3 } },
    options: PINNED,
  },
  {
    name: "tool-function-key-order",
    request: { kind: "tool", name: "add", args: { b: 3, a: 2 } },
    options: PINNED,
  },
  {
    name: "tool-mcp-server",
    request: { kind: "tool", name: "add", server: "calculator", args: { a: 2, b: 3 } },
    options: PINNED,
  },
  {
    name: "tool-tmp-path-argument",
    request: {
      kind: "tool",
      name: "read_file",
      server: "fs",
      args: { path: "/tmp/tmp.k3J9xQ/notes.txt" },
    },
    options: PINNED,
  },
  {
    name: "tool-timestamp-uuid-argument",
    request: {
      kind: "tool",
      name: "log",
      args: { line: "at 2026-09-09T10:00:00Z run 3f2504e0-4f89-11d3-9a0c-0305e82c3301" },
    },
    options: PINNED,
  },
  {
    name: "tool-project-path-argument",
    request: {
      kind: "tool",
      name: "read_file",
      args: { path: "/srv/checkout/src/a.ts", list: ["/srv/checkout/b", 1, null, true] },
      projectPath: "/srv/checkout",
    },
    options: PINNED,
  },
  {
    name: "tool-secret-argument",
    request: {
      kind: "tool",
      name: "http_get",
      args: {
        url: "http://127.0.0.1/x",
        token: "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD",
      },
    },
    options: PINNED,
    secrets: true,
  },
  {
    name: "tool-context-role-task-attempt-inputs",
    request: { kind: "tool", name: "run_tests", role: "reviewer", task: "Check the parser" },
    options: { ...PINNED, attempt: 2, inputArtifactHashes: [H.b, H.a] },
  },
  {
    name: "tool-resources-read",
    request: { kind: "tool", method: "resources/read", name: "file:///docs/readme.md", server: "docs" },
    options: PINNED,
  },
  {
    name: "tool-prompts-get",
    request: { kind: "tool", method: "prompts/get", name: "review", server: "docs", args: { lang: "ts" } },
    options: PINNED,
  },
  {
    name: "tool-tools-list",
    request: { kind: "tool", method: "tools/list", name: "tools/list", server: "docs" },
    options: PINNED,
  },
  {
    name: "tool-unicode-argument",
    request: { kind: "tool", name: "echo", args: { "\u00e9": "caf\u00e9", z: "\ud83d\ude00", n: 1.5e-7 } },
    options: PINNED,
  },
];

function ascii(text: string): string {
  return text.replace(/[^\n\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

const out = cases.map((c) => {
  const options: IdentityOptions = c.secrets
    ? { ...c.options, secrets: createSecretScanner({ ...IDENTITY_SECRETS, env: {} }) }
    : { ...c.options, secrets: false };
  return {
    name: c.name,
    request: c.request,
    options: c.options,
    ...(c.secrets ? { secrets: true } : {}),
    manifest: toolManifest(c.request, options),
    id: toolIdentity(c.request, options),
  };
});
const file = join(dirname(fileURLToPath(import.meta.url)), "identity-tool-v1.json");
writeFileSync(file, `${ascii(JSON.stringify(out, null, 2))}\n`);
console.log(`wrote ${out.length} tool vectors to ${file}`);
