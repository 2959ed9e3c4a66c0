#!/usr/bin/env python3
"""Second implementation of invocache stamp verification (docs/provenance.md).

    python3 verify_stamp.py ARTIFACT

For every line of ARTIFACT.intoto.jsonl: the line is an in-toto Statement v1
with the SLSA Provenance v1 predicate and buildType invocache/invocation/v1;
sha256(ARTIFACT) is its subject digest; the stamped manifest hashes to the
invocache-identity byproduct (identity recipe v1, computed by
test/vectors/verify_identity_vectors.py); the prompt digest is sha256 of the
prompt's bytes and the params digest sha256 of their JCS text. Prints one
line per stamp, exits 1 on any problem.
Standard library only.
"""
import hashlib
import json
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # leave no __pycache__ in the repository
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "vectors"))
from verify_identity_vectors import identity, jcs, wtf8  # noqa: E402

STATEMENT = "https://in-toto.io/Statement/v1"
SLSA = "https://slsa.dev/provenance/v1"
BUILD_TYPE = "https://invocache.dev/invocation/v1"


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
    digest = hashlib.sha256(artifact.read_bytes()).hexdigest()
    stamp_file = artifact.with_name(artifact.name + ".intoto.jsonl")
    failed = 0
    lines = stamp_file.read_text(encoding="utf-8").split("\n")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        problems, claimed = check(json.loads(line), digest)
        failed += bool(problems)
        status = "ok  " if not problems else "FAIL"
        print(f"{status} line {number} {claimed[:12]} {'; '.join(problems)}".rstrip())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
