#!/usr/bin/env bash
# Installs code-server (pinned in test/vscode/server/package-lock.json) into
# test/vscode/server/node_modules for the headless integration tests.
# Idempotent: does nothing when the server is already installed.
# Works offline apart from the npm registry: the nested @vscode/ripgrep step
# finds its download already cached (built from Debian's /usr/bin/rg).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
server="$here/server"
entry="$server/node_modules/code-server/out/node/entry.js"
# The last step of code-server's own postinstall builds its bundled VS Code
# server's node_modules; this file is present only when that step succeeded.
marker="$server/node_modules/code-server/lib/vscode/node_modules/@vscode/ripgrep/bin/rg"
if [[ -f "$entry" && -e "$marker" ]]; then
  echo "code-server already installed in $server"
  exit 0
fi
if [[ ! -x /usr/bin/rg ]]; then
  echo "install-server.sh: /usr/bin/rg missing (apt-get install -y ripgrep)" >&2
  exit 1
fi
tmp="$here/.install-tmp"
rm -rf "$tmp"
mkdir -p "$tmp/vscode-ripgrep-cache-1.15.11" "$tmp/rg"
cp /usr/bin/rg "$tmp/rg/rg"
tar -czf "$tmp/vscode-ripgrep-cache-1.15.11/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C "$tmp/rg" rg
export TMPDIR="$tmp"
export npm_config_unsafe_perm=true
export npm_config_yes=true
export npm_config_strict_allow_scripts=false
export npm_config_audit=false
export npm_config_fund=false
export JOBS=max
# Native modules build against the installed node's headers when present, so
# node-gyp never has to download them.
if [[ -z "${npm_config_nodedir:-}" && -f /usr/include/node/node.h ]]; then
  export npm_config_nodedir=/usr
fi
cd "$server"
start=$(date +%s)
if [[ -f package-lock.json ]]; then
  npm ci --no-audit --no-fund
else
  npm install --no-audit --no-fund
fi
if [[ ! -f "$entry" || ! -e "$marker" ]]; then
  echo "install-server.sh: code-server install finished but $marker is missing" >&2
  exit 1
fi
rm -rf "$tmp"
echo "code-server installed in $server in $(( $(date +%s) - start )) s"
