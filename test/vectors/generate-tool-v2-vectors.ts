/**
 * Writes test/vectors/identity-tool-v2.json, the golden vectors of recipe
 * tool v2 (docs/identity.md, "Tool identities"): arguments are data, only the
 * `argRules` normalize them (default "roots"). Run it by hand, only when
 * adding vectors:
 *
 *   npx tsx test/vectors/generate-tool-v2-vectors.ts
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
  secrets?: boolean;
}

const tool = (name: string, args: Record<string, unknown>, extra: Partial<ToolInvocationRequest> = {}): ToolInvocationRequest => ({
  kind: "tool",
  name,
  args,
  ...extra,
});

const cases: Case[] = [
  { name: "v2-uuid-a", request: tool("get_order", { id: "550e8400-e29b-41d4-a716-446655440000" }), options: PINNED },
  { name: "v2-uuid-b", request: tool("get_order", { id: "6ba7b810-9dad-11d1-80b4-00c04fd430c8" }), options: PINNED },
  { name: "v2-13-digit-id-a", request: tool("get_order", { id: "1767225600000" }), options: PINNED },
  { name: "v2-13-digit-id-b", request: tool("get_order", { id: "1767225600001" }), options: PINNED },
  { name: "v2-iso-date-2020", request: tool("list_orders", { since: "2020-01-01T00:00:00Z" }), options: PINNED },
  { name: "v2-iso-date-2026", request: tool("list_orders", { since: "2026-01-01T00:00:00Z" }), options: PINNED },
  { name: "v2-pattern-one-space", request: tool("grep", { pattern: "foo bar" }), options: PINNED },
  { name: "v2-pattern-two-spaces", request: tool("grep", { pattern: "foo  bar" }), options: PINNED },
  { name: "v2-pattern-newline", request: tool("grep", { pattern: "foo\nbar" }), options: PINNED },
  { name: "v2-pattern-nbsp", request: tool("grep", { pattern: "foo\u00a0bar" }), options: PINNED },
  { name: "v2-pattern-trailing-space", request: tool("grep", { pattern: "foo bar " }), options: PINNED },
  {
    name: "v2-roots-machine-a",
    request: tool("read_file", { path: "/work/machine-a/checkout/src/a.ts" }, { projectPath: "/work/machine-a/checkout" }),
    options: PINNED,
  },
  {
    name: "v2-roots-machine-b",
    request: tool("read_file", { path: "/srv/ci/b/checkout/src/a.ts" }, { projectPath: "/srv/ci/b/checkout" }),
    options: PINNED,
  },
  { name: "v2-roots-tmp-home", request: tool("read_file", { paths: ["/tmp/x/a.txt", "/home/alice/.npmrc"] }), options: PINNED },
  {
    name: "v2-nested",
    request: tool("query", {
      filter: { ids: ["550e8400-e29b-41d4-a716-446655440000", "1767225600000"], since: "2026-01-01T00:00:00Z" },
      rows: [{ text: "a  b\n" }, null, 1.5, true],
    }),
    options: PINNED,
  },
  {
    name: "v2-argrules-prompt",
    request: tool("log", { line: "at 2026-09-09T10:00:00Z run 3f2504e0-4f89-11d3-9a0c-0305e82c3301  ok" }, { argRules: "prompt" }),
    options: PINNED,
  },
  {
    name: "v2-argrules-none",
    request: tool("read_file", { path: "/tmp/x/a.txt" }, { argRules: "none" }),
    options: PINNED,
  },
  {
    name: "v2-argrules-list",
    request: tool("log", { line: "run 3f2504e0-4f89-11d3-9a0c-0305e82c3301 at /tmp/x  ok" }, { argRules: ["uuid", "root:tmp"] }),
    options: PINNED,
  },
  {
    name: "v2-server-roots",
    request: tool("read", { path: "README.md" }, { server: 'filesystem stdio ["node","/work/machine-a/checkout/fs.js","/work/machine-a/checkout/docs"]', projectPath: "/work/machine-a/checkout" }),
    options: PINNED,
  },
  {
    name: "v2-secret-argument",
    request: tool("http_get", { url: "http://127.0.0.1/x", token: "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD" }),
    options: PINNED,
    secrets: true,
  },
  {
    name: "v2-context-role-task-attempt",
    request: tool("run_tests", {}, { role: "reviewer", task: "Check  the parser", method: "tools/call" }),
    options: { ...PINNED, attempt: 2 },
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
const file = join(dirname(fileURLToPath(import.meta.url)), "identity-tool-v2.json");
writeFileSync(file, `${ascii(JSON.stringify(out, null, 2))}\n`);
console.log(`wrote ${out.length} tool v2 vectors to ${file}`);
