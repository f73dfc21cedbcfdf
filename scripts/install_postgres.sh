#!/usr/bin/env bash
# Install Debian's PostgreSQL server when missing: the database of a Prefect server that several
# machines (or worker processes) share (tests/flows/test_distributed.py starts its own cluster).
# SQLite stays the default for one machine.
set -euo pipefail
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "error: PostgreSQL is missing and this user cannot install it; run as root:" >&2
    echo "  apt-get install -y postgresql" >&2
    exit 1
  fi
fi
echo "Installing Debian postgresql (about 30 s)…"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql >/dev/null
ls /usr/lib/postgresql/*/bin/initdb
