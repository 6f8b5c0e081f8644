#!/bin/sh
# Builds a Python 3.14 for the Toad check (scripts/toad_acp_check.py) on a machine whose own
# Python is older (Toad needs >= 3.14; Debian 12 has 3.11), from Debian's package archive
# only: a minimal Debian sid root made by debootstrap, holding python3.14 and its venv
# module. Nothing on the host changes but the one package debootstrap (from the host's own
# sources); the root is run from the host by scripts/toad_python314, through the root's own
# loader and libraries (its glibc is newer than the host's), so no chroot and no mount.
#
#   sudo scripts/toad_python314_root.sh            # root in $TOAD_ROOT (default /work/toad-root)
#   TOAD_PYTHON=scripts/toad_python314 .venv/bin/python scripts/toad_acp_check.py
#
# Needs root (debootstrap), deb.debian.org and about 300 MB; a few minutes. Keep the root
# out of the repository. Remove it with `rm -rf "$TOAD_ROOT"` (nothing is mounted).
set -eu
ROOT="${TOAD_ROOT:-/work/toad-root}"
SUITE="${TOAD_SUITE:-sid}"
MIRROR="${TOAD_MIRROR:-http://deb.debian.org/debian}"
if [ -x "$ROOT/usr/bin/python3.14" ]; then
    echo "already built: $ROOT/usr/bin/python3.14"
else
    if ! command -v debootstrap >/dev/null 2>&1; then
        apt-get update && apt-get install -y debootstrap  # from the host's own sources
    fi
    # bookworm's debootstrap knows sid (not forky); sid has python3.14 for amd64.
    debootstrap --variant=minbase --include=python3.14,python3.14-venv,ca-certificates \
        "$SUITE" "$ROOT" "$MIRROR"
fi
TOAD_ROOT="$ROOT" "$(dirname "$0")/toad_python314" -c 'import sys, ssl; print(sys.version.split()[0], ssl.OPENSSL_VERSION)'
echo "TOAD_PYTHON=$(cd "$(dirname "$0")" && pwd)/toad_python314 (TOAD_ROOT=$ROOT)"
