#!/usr/bin/env bash
# Installs the pinned Claude Code CLI that tests/test_claude_code_cli.py drives (`claude mcp
# list` against installed integrations) into a cache folder outside the repository:
# $MEMVAULT_CLAUDE_CODE_DIR, default ~/.cache/memvault/claude-code-<version>. Does nothing when
# that version is already there; needs npm (node 18+) otherwise.
set -euo pipefail
version=2.1.328
dir="${MEMVAULT_CLAUDE_CODE_DIR:-$HOME/.cache/memvault/claude-code-$version}"
if [ -x "$dir/node_modules/.bin/claude" ]; then
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "install-claude-code.sh: npm is missing; install node and npm first" >&2
  exit 1
fi
mkdir -p "$dir"
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
  "@anthropic-ai/claude-code@$version" >/dev/null
if [ ! -x "$dir/node_modules/.bin/claude" ]; then
  echo "install-claude-code.sh: $dir/node_modules/.bin/claude is still missing after npm install" >&2
  exit 1
fi
