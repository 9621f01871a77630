#!/bin/sh
# @MARKER@ version=@VERSION@ hook=@HOOK@
# Installed by 'memvault hooks install' (@KIND@). 'memvault hooks uninstall' removes it
# and restores the hook that was here before (kept meanwhile as @HOOK@@LEGACY@, run first).
HOOK=@HOOK@
MEMVAULT_PYTHON=@PYTHON@
MEMVAULT_VAULT_DIR=@VAULT_DIR@
HERE=$(cd "$(dirname "$0")" && pwd)
SKIP_OWN_COMMANDS=@SKIP_INTERNAL@  # yes in reindex hooks
if [ "$SKIP_OWN_COMMANDS" = yes ] && [ "${MEMVAULT_INTERNAL:-}" = 1 ]; then
    # memvault's own git commands: it keeps its catalog and index fresh by itself.
    legacy="$HERE/$HOOK@LEGACY@"
    if [ -x "$legacy" ]; then exec "$legacy" "$@"; fi
    exit 0
fi
if [ -n "$MEMVAULT_PYTHON" ] && [ -x "$MEMVAULT_PYTHON" ]; then
    exec "$MEMVAULT_PYTHON" -P -m memvault.githooks \
        --hooks-dir "$HERE" --vault-dir "$MEMVAULT_VAULT_DIR" "$HOOK" -- "$@"
fi
if command -v memvault >/dev/null 2>&1; then
    exec memvault hook-run --hooks-dir "$HERE" --vault-dir "$MEMVAULT_VAULT_DIR" "$HOOK" -- "$@"
fi
echo "memvault: $HOOK hook: memvault not found ($MEMVAULT_PYTHON is gone, none on PATH);" \
    "run 'memvault hooks install' again, or 'memvault hooks uninstall'" >&2
if [ -x "$HERE/$HOOK@LEGACY@" ]; then "$HERE/$HOOK@LEGACY@" "$@" || exit $?; fi
exit @FAIL_STATUS@
