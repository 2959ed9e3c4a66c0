/**
 * Signed stamps: DSSE envelopes around the Statement, signed with Ed25519 or
 * ECDSA P-256, verified against trusted keys; checked independently with the
 * `openssl` CLI (signature) and the Python verifier (envelope, statement,
 * PAE bytes); and every way to forge or break one fails with its reason.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { StampError } from "../../src/errors.js";
import { invocationManifest, manifestIdentity } from "../../src/identity/index.js";
import {
  type DsseEnvelope,
  decodeBase64,
  IN_TOTO_PAYLOAD_TYPE,
  keyIdOf,
  pae,
  readSigningKey,
  readTrustedKey,
  type SigningKey,
  signEnvelope,
  signingKey,
  stampArtifact,
  trustedKey,
  verifySignature,
  verifyStamp,
  writeKeyPair,
} from "../../src/provenance/index.js";
import { skipUnless } from "../helpers/service.js";
import { tempDir } from "../helpers/tmp.js";
import { fixedKey, MACHINE, PLAN_TEXT, planId, planManifest, publicPem } from "./fixtures.js";
import { validateStatementV1 } from "./statement-shape.js";

const root = tempDir("signed");

let n = 0;
function workspace(name = "plan.md", text = PLAN_TEXT): { dir: string; artifact: string } {
  const dir = join(root, `w${n++}`);
  mkdirSync(dir);
  const artifact = join(dir, name);
  writeFileSync(artifact, text);
  return { dir, artifact };
}

const KEY = fixedKey();
const OTHER = fixedKey("invocache test key 2");
const TRUST = [trustedKey(publicPem(KEY))];

const envelopes = (stampPath: string): DsseEnvelope[] =>
  readFileSync(stampPath, "utf8")
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as DsseEnvelope);

function rewrite(stampPath: string, edit: (e: DsseEnvelope) => void): void {
  const list = envelopes(stampPath);
  for (const e of list) edit(e);
  writeFileSync(stampPath, `${list.map((e) => JSON.stringify(e)).join("\n")}\n`);
}

async function signedStamp(key: SigningKey = KEY, name = "plan.md") {
  const { dir, artifact } = workspace(name);
  const stampPath = await stampArtifact(artifact, { id: planId(), manifest: planManifest(), key });
  return { dir, artifact, stampPath };
}

const has = (cmd: string, arg = "--version") => spawnSync(cmd, [arg]).status === 0;

describe("DSSE envelopes", () => {
  it("a signed stamp is one envelope per line: in-toto payloadType, the Statement as payload, keyid derived from the key", async () => {
    const { artifact, stampPath } = await signedStamp();
    await stampArtifact(artifact, {
      id: planId(),
      manifest: planManifest(),
      key: KEY,
      replayed: true,
    });
    const list = envelopes(stampPath);
    expect(list).toHaveLength(2);
    for (const e of list) {
      expect(Object.keys(e).sort()).toEqual(["payload", "payloadType", "signatures"]);
      expect(e.payloadType).toBe("application/vnd.in-toto+json");
      expect(e.signatures).toHaveLength(1);
      // keyid: sha256 hex of the SPKI DER, computed here without src/.
      const der = KEY.publicKey.export({ type: "spki", format: "der" });
      expect(e.signatures[0]!.keyid).toBe(createHash("sha256").update(der).digest("hex"));
      const statement = JSON.parse(Buffer.from(e.payload, "base64").toString("utf8"));
      expect(validateStatementV1(statement)).toEqual([]);
      expect(statement.subject[0].name).toBe("plan.md");
    }
    const report = await verifyStamp(artifact, { trust: TRUST });
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.trust).toEqual([KEY.keyid]);
    expect(report.stamps.map((s) => [s.signed, s.trustedBy, s.replayed])).toEqual([
      [true, KEY.keyid, false],
      [true, KEY.keyid, true],
    ]);
    expect(report.stamps[0]!.signatures).toEqual([{ keyid: KEY.keyid, status: "trusted" }]);
  });

  it("PAE is exactly DSSEv1 SP len(type) SP type SP len(body) SP body, lengths in bytes", () => {
    expect(pae(IN_TOTO_PAYLOAD_TYPE, Buffer.from("{}")).toString()).toBe(
      "DSSEv1 28 application/vnd.in-toto+json 2 {}",
    );
    // The DSSE spec's own test vector (protocol.md, "Test Vectors").
    expect(pae("http://example.com/HelloWorld", Buffer.from("hello world")).toString()).toBe(
      "DSSEv1 29 http://example.com/HelloWorld 11 hello world",
    );
    // Bytes, not characters: "é" is two bytes in UTF-8.
    expect(pae("t", Buffer.from("é")).toString("hex")).toBe(
      Buffer.concat([Buffer.from("DSSEv1 1 t 2 "), Buffer.from("é")]).toString("hex"),
    );
  });

  it("base64 is read strictly: standard or URL-safe, nothing else", () => {
    expect(decodeBase64("e30=")?.toString()).toBe("{}");
    expect(decodeBase64("e30")?.toString()).toBe("{}");
    expect(decodeBase64("-_8=")).toEqual(Buffer.from([0xfb, 0xff]));
    expect(decodeBase64("+/8=")).toEqual(Buffer.from([0xfb, 0xff]));
    for (const bad of ["e3 0", "e30*", "e", "e31=", "e30==", "=e30"]) {
      expect(decodeBase64(bad), bad).toBeUndefined();
    }
  });

  it("unsigned stamps stay supported and are reported as unsigned; a signed one is unchecked without trust", async () => {
    const { artifact } = workspace();
    await stampArtifact(artifact, { id: planId(), manifest: planManifest() });
    await stampArtifact(artifact, { id: planId(), manifest: planManifest(), key: KEY });
    const report = await verifyStamp(artifact);
    expect(report.problems).toEqual([]);
    expect(report.trust).toBeUndefined();
    expect(report.stamps.map((s) => s.signed)).toEqual([false, true]);
    expect(report.stamps[0]!.signatures).toEqual([]);
    expect(report.stamps[1]!.signatures).toEqual([{ keyid: KEY.keyid, status: "unchecked" }]);
    expect(report.stamps[1]!.trustedBy).toBeUndefined();
    // With trust, the unsigned line fails and says why.
    const trusted = await verifyStamp(artifact, { trust: TRUST });
    expect(trusted.ok).toBe(false);
    expect(trusted.problems).toHaveLength(1);
    expect(trusted.problems[0]).toMatch(/^line 1: unsigned: trust was asked for/);
  });

  it("ECDSA P-256 signs too, and one trusted signature among several keys is enough", async () => {
    const dir = join(root, `p256-${n++}`);
    mkdirSync(dir);
    const files = await writeKeyPair(join(dir, "p.key.pem"), join(dir, "p.pub.pem"), "ecdsa-p256");
    const key = await readSigningKey(files.privateKeyPath);
    expect(key.algorithm).toBe("ecdsa-p256");
    const { artifact } = await signedStamp(key);
    const report = await verifyStamp(artifact, {
      trust: [publicPem(OTHER), await readTrustedKey(files.publicKeyPath)],
    });
    expect(report.problems).toEqual([]);
    expect(report.stamps[0]!.trustedBy).toBe(files.keyid);
  });
});

describe("tampering: each case fails with its reason named", () => {
  const only = (problems: string[]) => {
    expect(problems).toHaveLength(1);
    return problems[0]!;
  };

  it("a byte of the artifact flipped", async () => {
    const { artifact } = await signedStamp();
    const bytes = readFileSync(artifact);
    bytes[0] = bytes[0]! ^ 0x01;
    writeFileSync(artifact, bytes);
    const report = await verifyStamp(artifact, { trust: TRUST });
    expect(only(report.problems)).toMatch(/^line 1: the artifact changed since it was stamped/);
  });

  it("the artifact rewritten together with the digest in the payload (the attack on unsigned stamps)", async () => {
    const { artifact, stampPath } = await signedStamp();
    writeFileSync(artifact, "# Plan\n\n1. Exfiltrate the keys\n");
    const forged = createHash("sha256").update(readFileSync(artifact)).digest("hex");
    rewrite(stampPath, (e) => {
      const s = JSON.parse(Buffer.from(e.payload, "base64").toString("utf8"));
      s.subject[0].digest.sha256 = forged;
      e.payload = Buffer.from(JSON.stringify(s)).toString("base64");
    });
    // Unsigned checks alone are fooled: everything in the payload is consistent.
    expect((await verifyStamp(artifact)).problems).toEqual([]);
    const report = await verifyStamp(artifact, { trust: TRUST });
    expect(only(report.problems)).toMatch(
      /^line 1: signature 1 does not verify with trusted key [0-9a-f]{16}…: the payload or the signature was changed after signing$/,
    );
    expect(report.stamps[0]!.signatures[0]!.status).toBe("untrusted");
  });

  it("a byte of the payload flipped (inside the base64-decoded bytes)", async () => {
    const { artifact, stampPath } = await signedStamp();
    rewrite(stampPath, (e) => {
      const bytes = Buffer.from(e.payload, "base64");
      const at = bytes.indexOf("urn:uuid:") + 10; // a hex digit of the invocationId
      bytes[at] = bytes[at] === 0x61 ? 0x62 : 0x61;
      e.payload = bytes.toString("base64");
    });
    const report = await verifyStamp(artifact, { trust: TRUST });
    expect(only(report.problems)).toMatch(/signature 1 does not verify with trusted key/);
  });

  it("a character of the base64 payload damaged", async () => {
    const { artifact, stampPath } = await signedStamp();
    rewrite(stampPath, (e) => {
      e.payload = `${e.payload.slice(0, 10)}*${e.payload.slice(11)}`;
    });
    const report = await verifyStamp(artifact, { trust: TRUST });
    expect(only(report.problems)).toBe(
      "line 1: the DSSE envelope's payload is not base64: it was damaged or edited",
    );
  });

  it("a byte of the signature flipped", async () => {
    const { artifact, stampPath } = await signedStamp();
    rewrite(stampPath, (e) => {
      const sig = Buffer.from(e.signatures[0]!.sig, "base64");
      sig[5] = sig[5]! ^ 0x80;
      e.signatures[0]!.sig = sig.toString("base64");
    });
    const report = await verifyStamp(artifact, { trust: TRUST });
    expect(only(report.problems)).toMatch(
      /^line 1: signature 1 does not verify with trusted key .*changed after signing$/,
    );
  });

  it("the envelope's keyid swapped, for an unknown one or for another trusted key", async () => {
    const { artifact, stampPath } = await signedStamp();
    rewrite(stampPath, (e) => {
      e.signatures[0]!.keyid = OTHER.keyid;
    });
    // The keyid is a hint: the signature is still checked against every trusted key.
    const report = await verifyStamp(artifact, { trust: [...TRUST, trustedKey(publicPem(OTHER))] });
    expect(only(report.problems)).toBe(
      `line 1: signature 1: keyid ${OTHER.keyid.slice(0, 16)}… was edited: the signature is by trusted key ${KEY.keyid.slice(0, 16)}…`,
    );
    expect(report.stamps[0]!.signatures).toEqual([{ keyid: OTHER.keyid, status: "invalid" }]);
    rewrite(stampPath, (e) => {
      e.signatures[0]!.keyid = "0".repeat(64);
    });
    expect(only((await verifyStamp(artifact, { trust: TRUST })).problems)).toMatch(
      /keyid 0{16}… was edited: the signature is by trusted key/,
    );
  });

  it("a valid envelope of another artifact replayed into this artifact's stamp file", async () => {
    const other = await signedStamp(KEY, "report.md");
    writeFileSync(other.artifact, "# Report\n\nAll good.\n");
    const fresh = workspace("plan.md", "# Plan\n\nsomething else\n");
    await stampArtifact(other.artifact, { id: planId(), manifest: planManifest(), key: KEY });
    const line = readFileSync(`${other.artifact}.intoto.jsonl`, "utf8").split("\n")[1]!;
    writeFileSync(`${fresh.artifact}.intoto.jsonl`, `${line}\n`);
    const report = await verifyStamp(fresh.artifact, { trust: TRUST });
    expect(only(report.problems)).toMatch(
      /^line 1: this stamp is for another artifact: its subject is "report.md" with sha256 [0-9a-f]{64}, not "plan.md" with sha256 [0-9a-f]{64}/,
    );
    // The signature itself is fine: it is the subject that is wrong.
    expect(report.stamps[0]!.trustedBy).toBe(KEY.keyid);
  });

  it("the stamp file truncated: mid-line, and to nothing", async () => {
    const { artifact, stampPath } = await signedStamp();
    const text = readFileSync(stampPath, "utf8");
    writeFileSync(stampPath, text.slice(0, Math.floor(text.length / 2)));
    const cut = await verifyStamp(artifact, { trust: TRUST });
    expect(cut.problems[0]).toMatch(/^line 1: not JSON \(/);
    expect(cut.problems).toContain(`no invocache stamp in ${stampPath}`);
    writeFileSync(stampPath, "");
    expect(only((await verifyStamp(artifact, { trust: TRUST })).problems)).toBe(
      `no invocache stamp in ${stampPath}`,
    );
  });

  it("stamped with one key, verified with another", async () => {
    const { artifact } = await signedStamp(OTHER);
    const report = await verifyStamp(artifact, { trust: TRUST });
    expect(only(report.problems)).toBe(
      `line 1: signature 1 is by keyid ${OTHER.keyid.slice(0, 16)}…, which is not a trusted key (or the payload or signature was changed after signing)`,
    );
    expect(report.stamps[0]!.signatures).toEqual([{ keyid: OTHER.keyid, status: "untrusted" }]);
  });

  it("an envelope with its signatures removed, or of another payloadType", async () => {
    const { artifact, stampPath } = await signedStamp();
    rewrite(stampPath, (e) => {
      e.signatures = [];
    });
    expect(only((await verifyStamp(artifact, { trust: TRUST })).problems)).toBe(
      "line 1: the DSSE envelope has no signature",
    );
    rewrite(stampPath, (e) => {
      e.payloadType = "application/json";
    });
    const foreign = await verifyStamp(artifact, { trust: TRUST });
    expect(foreign.problems).toEqual([
      expect.stringMatching(
        /^line 1: not an invocache stamp: it is a DSSE envelope of payloadType "application\/json"/,
      ),
      `no invocache stamp in ${stampPath}`,
    ]);
  });
});

/** P-256's group order n (SEC 2 §2.4.2), written out here independently of src/. */
const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

/** (r, s) of a DER ECDSA-Sig-Value, read by hand: SEQUENCE { INTEGER r, INTEGER s }. */
function derRS(sig: Buffer): { r: bigint; s: bigint } {
  expect(sig[0]).toBe(0x30);
  expect(sig[1]).toBe(sig.length - 2);
  const int = (at: number): [bigint, number] => {
    expect(sig[at]).toBe(0x02);
    const len = sig[at + 1]!;
    const bytes = sig.subarray(at + 2, at + 2 + len);
    return [BigInt(`0x${bytes.toString("hex")}`), at + 2 + len];
  };
  const [r, next] = int(2);
  const [s, end] = int(next);
  expect(end).toBe(sig.length);
  return { r, s };
}

/** DER of (r, s): minimal big-endian INTEGERs, a 0x00 in front when the top bit is set. */
function derOf(r: bigint, s: bigint): Buffer {
  const int = (v: bigint) => {
    let hex = v.toString(16);
    if (hex.length % 2) hex = `0${hex}`;
    let bytes = Buffer.from(hex, "hex");
    if (bytes[0]! & 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
    return Buffer.concat([Buffer.from([0x02, bytes.length]), bytes]);
  };
  const body = Buffer.concat([int(r), int(s)]);
  return Buffer.concat([Buffer.from([0x30, body.length]), body]);
}

describe("ECDSA P-256 malleability: low-S only", () => {
  const p256 = async () => {
    const dir = join(root, `lows-${n++}`);
    mkdirSync(dir);
    const files = await writeKeyPair(join(dir, "k.key.pem"), join(dir, "k.pub.pem"), "ecdsa-p256");
    return { dir, files, key: await readSigningKey(files.privateKeyPath) };
  };

  it("signing always yields low-S (s <= n/2), and each signature verifies", async () => {
    const { key } = await p256();
    const trusted = trustedKey(key.publicKey);
    const body = Buffer.from('{"_type":"x"}');
    for (let i = 0; i < 200; i++) {
      const e = signEnvelope(body, IN_TOTO_PAYLOAD_TYPE, key);
      const sig = Buffer.from(e.signatures[0]!.sig, "base64");
      const { s } = derRS(sig);
      expect(s <= P256_N / 2n, `signature ${i}: s > n/2`).toBe(true);
      expect(verifySignature(pae(IN_TOTO_PAYLOAD_TYPE, body), sig, trusted)).toBe(true);
    }
  });

  it("the high-S twin (s replaced by n - s) of a valid signed stamp is refused, naming why", async () => {
    const { key } = await p256();
    const { artifact, stampPath } = await signedStamp(key);
    const trust = [trustedKey(key.publicKey)];
    expect((await verifyStamp(artifact, { trust })).problems).toEqual([]);
    const e = envelopes(stampPath)[0]!;
    const { r, s } = derRS(Buffer.from(e.signatures[0]!.sig, "base64"));
    const twin = derOf(r, P256_N - s);
    expect(derRS(twin).s > P256_N / 2n).toBe(true);
    rewrite(stampPath, (env) => {
      env.signatures[0]!.sig = twin.toString("base64");
    });
    const report = await verifyStamp(artifact, { trust });
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual([
      `line 1: signature 1 (keyid ${key.keyid.slice(0, 16)}…) is an ECDSA signature with a high S value (s > n/2), the malleable twin of a valid one: only low-S signatures are accepted, so it is refused; re-sign the artifact (invocache stamp --key)`,
    ]);
    expect(report.stamps[0]!.signatures).toEqual([{ keyid: key.keyid, status: "invalid" }]);
    expect(report.stamps[0]!.trustedBy).toBeUndefined();
    // The low-level check refuses it too.
    const signed = pae(e.payloadType, Buffer.from(e.payload, "base64"));
    expect(verifySignature(signed, twin, trust[0]!)).toBe(false);
  });

  it.skipIf(skipUnless(has("openssl", "version"), "openssl", "apt-get install -y openssl"))(
    "openssl agrees: it verifies every low-S signature; the twin is valid arithmetic (openssl accepts it), refused by policy",
    async () => {
      const { dir, files, key } = await p256();
      const body = Buffer.from('{"_type":"openssl"}');
      writeFileSync(join(dir, "pae.bin"), pae(IN_TOTO_PAYLOAD_TYPE, body));
      const check = (sig: Buffer) => {
        writeFileSync(join(dir, "sig.bin"), sig);
        return spawnSync(
          "openssl",
          ["dgst", "-sha256", "-verify", files.publicKeyPath, "-signature", "sig.bin", "pae.bin"],
          { cwd: dir, encoding: "utf8" },
        ).stdout.trim();
      };
      for (let i = 0; i < 8; i++) {
        const sig = Buffer.from(
          signEnvelope(body, IN_TOTO_PAYLOAD_TYPE, key).signatures[0]!.sig,
          "base64",
        );
        expect(check(sig)).toBe("Verified OK");
        const { r, s } = derRS(sig);
        expect(check(derOf(r, P256_N - s))).toBe("Verified OK");
        expect(
          verifySignature(
            pae(IN_TOTO_PAYLOAD_TYPE, body),
            derOf(r, P256_N - s),
            trustedKey(key.publicKey),
          ),
        ).toBe(false);
      }
    },
  );
});

describe("keys", () => {
  it("writeKeyPair: private key 0600, public key SPKI PEM, keyid = sha256 of the DER; never overwrites", async () => {
    const dir = join(root, `keys-${n++}`);
    mkdirSync(dir);
    const priv = join(dir, "k.key.pem");
    const pub = join(dir, "k.pub.pem");
    const files = await writeKeyPair(priv, pub);
    expect(statSync(priv).mode & 0o777).toBe(0o600);
    expect(readFileSync(priv, "utf8")).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(readFileSync(pub, "utf8")).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
    expect(files.keyid).toBe(keyIdOf((await readTrustedKey(pub)).publicKey));
    expect((await readSigningKey(priv)).keyid).toBe(files.keyid);
    const before = readFileSync(priv, "utf8");
    await expect(writeKeyPair(priv, join(dir, "new.pub.pem"))).rejects.toMatchObject({
      name: "StampError",
      code: "ERR_STAMP_KEY",
    });
    await expect(writeKeyPair(join(dir, "new.key.pem"), pub)).rejects.toThrow(
      /exists; a key is never overwritten/,
    );
    expect(readFileSync(priv, "utf8")).toBe(before);
    // The half-written pair of the refused call is not left behind.
    expect(() => statSync(join(dir, "new.key.pem"))).toThrow();
    // A symlink planted where the key goes is not followed.
    const target = join(dir, "victim.txt");
    writeFileSync(target, "keep me");
    symlinkSync(target, join(dir, "planted.key.pem"));
    await expect(
      writeKeyPair(join(dir, "planted.key.pem"), join(dir, "planted.pub.pem")),
    ).rejects.toThrow(StampError);
    expect(readFileSync(target, "utf8")).toBe("keep me");
  });

  it("a public key to sign with, a private key file that is not a key, an RSA key: ERR_STAMP_KEY naming it", async () => {
    expect(() => signingKey(publicPem(KEY))).toThrow(
      /is a public key; signing needs the private key/,
    );
    expect(() => signingKey("not a key")).toThrow(/is not a PEM private key/);
    const { generateKeyPairSync } = await import("node:crypto");
    const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 });
    expect(() => signingKey(rsa.privateKey)).toThrow(
      /is a rsa key; stamps are signed with Ed25519 or ECDSA P-256/,
    );
    await expect(readSigningKey(join(root, "missing.pem"))).rejects.toThrow(
      /cannot read signing key/,
    );
    await expect(
      stampArtifact(workspace().artifact, { id: planId(), manifest: planManifest(), key: "nope" }),
    ).rejects.toThrow(/opts.key is not a PEM private key/);
    await expect(verifyStamp(workspace().artifact, { trust: ["nope"] })).rejects.toThrow(
      /opts.trust\[0\] is not a PEM public key/,
    );
  });
});

describe("independent verification", () => {
  const script = fileURLToPath(new URL("./verify_stamp.py", import.meta.url));

  it.skipIf(skipUnless(has("openssl", "version"), "openssl", "apt-get install -y openssl"))(
    "openssl verifies the Ed25519 signature over the PAE, and rejects a changed payload",
    async () => {
      const { dir, artifact, stampPath } = await signedStamp();
      writeFileSync(join(dir, "pub.pem"), publicPem(KEY));
      const e = envelopes(stampPath)[0]!;
      const body = Buffer.from(e.payload, "base64");
      // The PAE rebuilt here from the spec's definition, not with src/'s pae().
      const paeBytes = Buffer.concat([
        Buffer.from(`DSSEv1 ${Buffer.byteLength(e.payloadType)} ${e.payloadType} ${body.length} `),
        body,
      ]);
      writeFileSync(join(dir, "pae.bin"), paeBytes);
      writeFileSync(join(dir, "sig.bin"), Buffer.from(e.signatures[0]!.sig, "base64"));
      const verify = (pae: string) =>
        spawnSync(
          "openssl",
          [
            "pkeyutl",
            "-verify",
            "-pubin",
            "-inkey",
            "pub.pem",
            "-rawin",
            "-in",
            pae,
            "-sigfile",
            "sig.bin",
          ],
          { cwd: dir, encoding: "utf8" },
        );
      const ok = verify("pae.bin");
      expect(ok.stdout.trim()).toBe("Signature Verified Successfully");
      expect(ok.status).toBe(0);
      writeFileSync(
        join(dir, "bad.bin"),
        Buffer.concat([paeBytes.subarray(0, -2), Buffer.from(" }")]),
      );
      const bad = verify("bad.bin");
      expect(bad.stdout.trim()).toBe("Signature Verification Failure");
      expect(bad.status).toBe(1);
      // And the keyid is what openssl's DER of the public key hashes to.
      const der = spawnSync("openssl", ["pkey", "-pubin", "-in", "pub.pem", "-outform", "DER"], {
        cwd: dir,
      });
      expect(createHash("sha256").update(der.stdout).digest("hex")).toBe(e.signatures[0]!.keyid);
      void artifact;
    },
  );

  it.skipIf(skipUnless(has("openssl", "version"), "openssl", "apt-get install -y openssl"))(
    "openssl verifies an ECDSA P-256 signature (DER, over the SHA-256 of the PAE)",
    async () => {
      const dir = join(root, `p256o-${n++}`);
      mkdirSync(dir);
      const files = await writeKeyPair(
        join(dir, "k.key.pem"),
        join(dir, "k.pub.pem"),
        "ecdsa-p256",
      );
      const { stampPath } = await signedStamp(await readSigningKey(files.privateKeyPath));
      const e = envelopes(stampPath)[0]!;
      writeFileSync(join(dir, "pae.bin"), pae(e.payloadType, Buffer.from(e.payload, "base64")));
      writeFileSync(join(dir, "sig.bin"), Buffer.from(e.signatures[0]!.sig, "base64"));
      const r = spawnSync(
        "openssl",
        ["dgst", "-sha256", "-verify", "k.pub.pem", "-signature", "sig.bin", "pae.bin"],
        { cwd: dir, encoding: "utf8" },
      );
      expect(r.stdout.trim()).toBe("Verified OK");
      expect(r.status).toBe(0);
    },
  );

  it.skipIf(
    skipUnless(
      has("python3") && has("openssl", "version"),
      "python3 and openssl",
      "apt-get install -y python3 openssl",
    ),
  )(
    "verify_stamp.py checks the envelope and statement, and its PAE bytes verify with openssl",
    async () => {
      const { dir, artifact } = workspace();
      const unicode = invocationManifest(
        { role: "builder", prompt: "naïve \ud83d café 😀", model: "m", params: { t: 1e-7 } },
        MACHINE,
      );
      await stampArtifact(artifact, { id: planId(), manifest: planManifest(), key: KEY });
      await stampArtifact(artifact, { id: manifestIdentity(unicode), manifest: unicode, key: KEY });
      await stampArtifact(artifact, { id: planId(), manifest: planManifest() }); // unsigned
      const paeDir = join(dir, "pae");
      mkdirSync(paeDir);
      const r = spawnSync("python3", [script, artifact, "--pae-dir", paeDir], { encoding: "utf8" });
      expect(r.stderr).toBe("");
      expect(r.stdout).toBe(
        `ok   line 1 ${planId().slice(0, 12)} dsse ${KEY.keyid.slice(0, 12)}\n` +
          `ok   line 2 ${manifestIdentity(unicode).slice(0, 12)} dsse ${KEY.keyid.slice(0, 12)}\n` +
          `ok   line 3 ${planId().slice(0, 12)}\n`,
      );
      expect(r.status).toBe(0);
      writeFileSync(join(dir, "pub.pem"), publicPem(KEY));
      for (const line of [1, 2]) {
        const e = envelopes(`${artifact}.intoto.jsonl`)[line - 1]!;
        // Python's PAE bytes are the ones src/ signed.
        expect(readFileSync(join(paeDir, `line-${line}.pae`))).toEqual(
          pae(e.payloadType, Buffer.from(e.payload, "base64")),
        );
        const v = spawnSync(
          "openssl",
          [
            "pkeyutl",
            "-verify",
            "-pubin",
            "-inkey",
            "pub.pem",
            "-rawin",
            "-in",
            join(paeDir, `line-${line}.pae`),
            "-sigfile",
            join(paeDir, `line-${line}.sig-1`),
          ],
          { cwd: dir, encoding: "utf8" },
        );
        expect(v.stdout.trim(), `line ${line}`).toBe("Signature Verified Successfully");
      }
      // A damaged envelope fails in Python too.
      const stampPath = `${artifact}.intoto.jsonl`;
      const lines = readFileSync(stampPath, "utf8").trimEnd().split("\n");
      const e = JSON.parse(lines[0]!) as DsseEnvelope;
      e.payload = `${e.payload.slice(0, 10)}*${e.payload.slice(11)}`;
      lines[0] = JSON.stringify(e);
      writeFileSync(stampPath, `${lines.join("\n")}\n`);
      const bad = spawnSync("python3", [script, artifact], { encoding: "utf8" });
      expect(bad.status).toBe(1);
      expect(bad.stdout).toMatch(/^FAIL line 1 - payload is not base64$/m);
    },
  );
});
