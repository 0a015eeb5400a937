#!/bin/sh
# deps.sh - installs the Debian packages mint needs to build and test, if any are missing.
# Safe to rerun: it only calls apt-get when something is absent. Needs root or sudo for that.
#   tools/deps.sh [EXTRA-PACKAGE ...]
set -eu
pkgs="gcc make cmake pkg-config libxxhash-dev libjson-c-dev libcriterion-dev libmicrohttpd-dev libpcre2-dev $*"
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "mint: installing missing Debian packages:$missing" >&2
if [ "$(id -u)" = 0 ]; then
    SUDO=""
elif command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
else
    echo "mint: cannot install$missing (not root and no sudo); install them and rerun" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq $missing >/dev/null
