#!/usr/bin/env bash
# Validates the package a user installs: packs it as npm publishes it, then
# lints the tarball with publint and checks its types resolve for ESM users
# with @arethetypeswrong/cli (invocache is ESM-only: see README). Needs dist/.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
npm pack --silent --pack-destination "$out" >/dev/null
tarball=$(ls "$out"/*.tgz)
npx --no-install publint run --strict "$tarball"
npx --no-install attw --profile esm-only --format table-flipped --no-emoji "$tarball"
