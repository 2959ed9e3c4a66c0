/**
 * Fixed inputs for the provenance tests and for the example stamp printed in
 * docs/provenance.md (doc.test.ts keeps the two equal).
 */
import { createHash, createPrivateKey, createPublicKey } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type InvocationRequest,
  invocationIdentity,
  invocationManifest,
  type Manifest,
} from "../../src/identity/index.js";
import { type SigningKey, signingKey, stampFromRecorder } from "../../src/provenance/index.js";
import { createRecorder } from "../../src/recorder/index.js";

/** Pinned machine roots, so manifests do not depend on who runs the tests. */
export const MACHINE = { homeDir: "/home/alice", tmpDirs: ["/tmp"] };

/** The artifact of the docs example: `plan.md`. */
export const PLAN_NAME = "plan.md";
export const PLAN_TEXT = "# Plan\n\n1. Scaffold the app\n2. Add the login page\n";

/** The input artifact the planner read (its `hashArtifact`). */
export const SPEC_HASH = "sha256:4b2d1f8e0c9a7b6d5e3f2a1c0b9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d";

export const PLAN_REQUEST: InvocationRequest = {
  role: "planner",
  model: "gpt-5",
  prompt: "Write a plan for the app in /work/run-7/app from spec.md",
  task: "T-1",
  projectPath: "/work/run-7",
  params: { temperature: 0.2 },
};

export const PLAN_OPTIONS = { ...MACHINE, attempt: 0, inputArtifactHashes: [SPEC_HASH] };

export function planManifest(): Manifest {
  return invocationManifest(PLAN_REQUEST, PLAN_OPTIONS);
}

export function planId(): string {
  return invocationIdentity(PLAN_REQUEST, PLAN_OPTIONS);
}

/** The two runs of the docs example: the recording, then its replay. */
export const DOC_RUNS = [
  {
    invocationId: "urn:uuid:0b6c9a52-3f1e-4c1d-9a0e-5d2b7c8e4f10",
    startedOn: "2026-01-31T12:00:00.000Z",
    finishedOn: "2026-01-31T12:00:04.250Z",
  },
  {
    invocationId: "urn:uuid:7f3d2e1a-8b4c-4d5e-9f60-1a2b3c4d5e6f",
    startedOn: "2026-01-31T12:05:00.000Z",
    finishedOn: "2026-01-31T12:05:00.003Z",
  },
] as const;

/**
 * A fixed Ed25519 key for tests and the docs' signed example, so its keyid
 * is the same on every machine. Derived from a public seed (sha256 of a
 * label) instead of committing a private key file: it signs test data only
 * and must never be trusted for anything else.
 */
export function fixedKey(label = "invocache test key 1"): SigningKey {
  const seed = createHash("sha256").update(label).digest();
  // PKCS #8 for Ed25519 (RFC 8410 §7): a fixed 16-byte prefix, then the 32-byte seed.
  const der = Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), seed]);
  return signingKey(createPrivateKey({ key: der, format: "der", type: "pkcs8" }));
}

/** PEM of a signing key's public half. */
export function publicPem(key: SigningKey): string {
  return createPublicKey(key.privateKey).export({ type: "spki", format: "pem" }) as string;
}

/** File name of the public key beside the docs' signed example. */
export const DOC_PUBLIC_KEY = "invocache-signing.pub.pem";

/**
 * The docs example, for real: a planner step run twice through a recorder
 * (record, then replay), writing `plan.md` in `dir` and stamping it after each
 * run. With `key`, the stamps are signed and the public key is written to
 * `dir/invocache-signing.pub.pem`. Returns the artifact path.
 */
export async function docExample(dir: string, key?: SigningKey): Promise<string> {
  if (key !== undefined) await writeFile(join(dir, DOC_PUBLIC_KEY), publicPem(key));
  const artifact = join(dir, PLAN_NAME);
  const recorder = createRecorder({ store: "memory://", mode: "auto", identity: MACHINE });
  try {
    for (const run of DOC_RUNS) {
      const out = await recorder.call(PLAN_REQUEST, async () => ({ text: PLAN_TEXT }), {
        attempt: 0,
        inputArtifactHashes: [SPEC_HASH],
      });
      await writeFile(artifact, out.text);
      await stampFromRecorder(artifact, recorder, key === undefined ? run : { ...run, key });
    }
  } finally {
    await recorder.close();
  }
  return artifact;
}
