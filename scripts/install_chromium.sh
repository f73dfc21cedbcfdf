#!/usr/bin/env bash
# Install Debian's Chromium — the headless shell (the engine of headless rollouts) and the full browser
# (headed runs, and the fallback) — and fonts, when missing. Never `playwright install`: these machines
# reach only package registries, and Playwright 1.64.1's driver matches Debian's Chromium.
set -euo pipefail
# Dancing Script is the `hard-font` variation's face (perturb/_appearance.py); a single family, so no
# other font's fallback changes when it is installed.
FONTS="fonts-liberation fonts-dejavu-core fonts-dancingscript"
PACKAGES="chromium chromium-headless-shell"
if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromium-headless-shell ] \
   && { [ -z "${AUI_CHROMIUM:-}" ] || [ -x "$AUI_CHROMIUM" ]; } \
   && [ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] \
   && [ -f /usr/share/fonts/opentype/dancingscript/DancingScript-Regular.otf ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "error: Chromium is missing and this user cannot install it; run as root:" >&2
    echo "  apt-get install -y $PACKAGES $FONTS" >&2
    exit 1
  fi
fi
echo "Installing Debian's chromium, chromium-headless-shell and fonts (about 40 s; $FONTS)…"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $PACKAGES $FONTS >/dev/null
/usr/bin/chromium-headless-shell --version
/usr/bin/chromium --version 2>/dev/null || true
