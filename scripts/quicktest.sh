#!/usr/bin/env bash
# Fast inner loop for one or a few test files: bundle each with esbuild (no
# type check) into out-quick/ and run them with node's test runner.
#   scripts/quicktest.sh test/unit/arch/x86_64-alu.test.ts [more.test.ts ...]
set -euo pipefail
cd "$(dirname "$0")/.."
outs=()
for f in "$@"; do
  o="out-quick/${f%.ts}.js"
  npx esbuild "$f" --bundle --platform=node --target=node20 --format=cjs --sourcemap --external:vscode --log-level=warning --outfile="$o"
  outs+=("$o")
done
exec node --enable-source-maps --test --test-reporter=spec "${outs[@]}"
