#!/usr/bin/env bash
# Install Debian's Chromium and fonts when missing. Never `playwright install`: these machines
# reach only package registries, and Playwright 1.64.1's driver matches Debian's Chromium.
set -euo pipefail
# Dancing Script is the `hard-font` variation's face (perturb/_appearance.py); a single family, so no
# other font's fallback changes when it is installed.
FONTS="fonts-liberation fonts-dejavu-core fonts-dancingscript"
if [ -x "${AUI_CHROMIUM:-/usr/bin/chromium}" ] && [ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] \
   && [ -f /usr/share/fonts/opentype/dancingscript/DancingScript-Regular.otf ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "error: Chromium is missing and this user cannot install it; run as root:" >&2
    echo "  apt-get install -y chromium $FONTS" >&2
    exit 1
  fi
fi
echo "Installing Debian chromium and fonts (about 30 s; $FONTS)…"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium $FONTS >/dev/null
"${AUI_CHROMIUM:-/usr/bin/chromium}" --version
