#!/usr/bin/env python3
"""Second implementation of invocache stamp verification (docs/provenance.md).

    python3 verify_stamp.py ARTIFACT [--pae-dir DIR]

For every line of ARTIFACT.intoto.jsonl: a signed line is a DSSE envelope
(payloadType application/vnd.in-toto+json, payload and sig in base64) whose
payload is the Statement; the Statement is an in-toto Statement v1
with the SLSA Provenance v1 predicate and buildType invocache/invocation/v1;
sha256(ARTIFACT) is its subject digest; the stamped manifest hashes to the
invocache-identity byproduct (identity recipe v1, computed by
test/vectors/verify_identity_vectors.py); the prompt digest is sha256 of the
prompt's bytes and the params digest sha256 of their JCS text. Prints one
line per stamp, exits 1 on any problem.

The standard library cannot verify Ed25519, so signatures are not checked
here: with --pae-dir, the exact bytes DSSE signs (the PAE of the payload)
and each signature are written to DIR/line-N.pae and DIR/line-N.sig-K, for
`openssl pkeyutl -verify -rawin` (docs/provenance.md).
Standard library only.
"""
import base64
import binascii
import hashlib
import json
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # leave no __pycache__ in the repository
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "vectors"))
from verify_identity_vectors import identity, jcs, wtf8  # noqa: E402

STATEMENT = "https://in-toto.io/Statement/v1"
SLSA = "https://slsa.dev/provenance/v1"
BUILD_TYPE = "pkg:npm/invocache#docs/build-types/invocation-v1.md"
PAYLOAD_TYPE = "application/vnd.in-toto+json"


def b64decode(text):
    """Standard or URL-safe base64 (DSSE allows both), strictly: None if it is not base64."""
    try:
        padded = text + "=" * (-len(text) % 4)
        if "-" in text or "_" in text:
            padded = padded.replace("-", "+").replace("_", "/")
        return base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        return None


def pae(payload_type, body):
    """DSSE v1 pre-authentication encoding (secure-systems-lab/dsse protocol.md)."""
    t = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(t), t, len(body), body)


def open_envelope(envelope):
    """(statement, PAE bytes, [(keyid, signature bytes)], problems) of a DSSE envelope."""
    if envelope.get("payloadType") != PAYLOAD_TYPE:
        return None, None, [], ["not an in-toto DSSE envelope"]
    body = b64decode(envelope.get("payload", ""))
    if body is None:
        return None, None, [], ["payload is not base64"]
    sigs = []
    for s in envelope.get("signatures", []):
        sig = b64decode(s.get("sig", ""))
        if not sig:
            return None, None, [], ["a sig is not base64"]
        sigs.append((s.get("keyid", ""), sig))
    if not sigs:
        return None, None, [], ["envelope has no signature"]
    try:
        return json.loads(body.decode("utf-8")), pae(PAYLOAD_TYPE, body), sigs, []
    except (UnicodeDecodeError, ValueError):
        return None, None, [], ["payload is not JSON"]


def check(stamp, artifact_sha256):
    """(problems, claimed identity) of one parsed line."""
    if stamp.get("_type") != STATEMENT:
        return ["not an in-toto Statement v1"], "-"
    if stamp.get("predicateType") != SLSA:
        return ["not SLSA Provenance v1"], "-"
    definition = stamp["predicate"]["buildDefinition"]
    if definition.get("buildType") != BUILD_TYPE:
        return ["not an invocache invocation"], "-"
    problems = []
    if artifact_sha256 not in [s["digest"].get("sha256") for s in stamp["subject"]]:
        problems.append("artifact changed since it was stamped")
    manifest = definition["internalParameters"]["manifest"]
    claimed = [
        b["digest"]["sha256"]
        for b in stamp["predicate"]["runDetails"]["byproducts"]
        if b.get("name") == "invocache-identity"
    ]
    if claimed != [identity(manifest)]:
        problems.append("identity mismatch")
    params = definition["externalParameters"]
    if params["promptDigest"]["sha256"] != hashlib.sha256(wtf8(manifest["prompt"])).hexdigest():
        problems.append("prompt digest mismatch")
    if "params" in manifest:
        want = hashlib.sha256(wtf8(jcs(manifest["params"]))).hexdigest()
        if params.get("paramsDigest", {}).get("sha256") != want:
            problems.append("params digest mismatch")
    elif "paramsDigest" in params:
        problems.append("paramsDigest without params")
    for key in ("role", "model", "task", "attempt"):
        if params[key] != manifest[key]:
            problems.append(f"externalParameters.{key} differs from the manifest")
    return problems, (claimed or ["-"])[0]


def main(argv):
    artifact = Path(argv[1])
    pae_dir = Path(argv[3]) if len(argv) > 3 and argv[2] == "--pae-dir" else None
    digest = hashlib.sha256(artifact.read_bytes()).hexdigest()
    stamp_file = artifact.with_name(artifact.name + ".intoto.jsonl")
    failed = 0
    lines = stamp_file.read_text(encoding="utf-8").split("\n")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        value = json.loads(line)
        signed = ""
        if "payloadType" in value and "_type" not in value:
            value, signed_bytes, sigs, problems = open_envelope(value)
            if problems:
                failed += 1
                print(f"FAIL line {number} - {'; '.join(problems)}")
                continue
            signed = " dsse " + ",".join(k[:12] for k, _ in sigs)
            if pae_dir is not None:
                (pae_dir / f"line-{number}.pae").write_bytes(signed_bytes)
                for k, (_, sig) in enumerate(sigs, start=1):
                    (pae_dir / f"line-{number}.sig-{k}").write_bytes(sig)
        problems, claimed = check(value, digest)
        failed += bool(problems)
        status = "ok  " if not problems else "FAIL"
        print(f"{status} line {number} {claimed[:12]}{signed} {'; '.join(problems)}".rstrip())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
