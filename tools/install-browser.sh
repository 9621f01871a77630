#!/usr/bin/env bash
# Installs what the web inspector's browser tests drive: Debian's chromium and its
# chromium-driver (tests/ui_support.py points Selenium at /usr/bin/chromium and
# /usr/bin/chromedriver). Does nothing when both are there; needs root otherwise.
set -euo pipefail
if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-browser.sh: chromium or chromedriver is missing; run this as root" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium chromium-driver >/dev/null
for binary in /usr/bin/chromium /usr/bin/chromedriver; do
  if [ ! -x "$binary" ]; then
    echo "install-browser.sh: $binary is still missing after apt-get install" >&2
    exit 1
  fi
done
