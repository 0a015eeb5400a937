#!/bin/sh
# deps.sh - installs the Debian packages mint needs to build and test, if any are missing.
# Safe to rerun: it only calls apt-get when something is absent. Needs root or sudo for that.
#   tools/scripts/deps.sh [EXTRA-PACKAGE ...]
set -eu
pkgs="gcc make cmake pkg-config libxxhash-dev libjson-c-dev libcriterion-dev libmicrohttpd-dev libpcre2-dev libcurl4-openssl-dev $*"
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
# Another apt (unattended upgrades on a fresh machine, a second build) may hold dpkg's lock:
# apt-get then fails at once with exit 100. Wait for it, saying so, up to MINT_APT_WAIT seconds
# (default 300); apt-get's own -o DPkg::Lock::Timeout does the waiting where apt knows it.
wait=${MINT_APT_WAIT:-300}
if command -v fuser >/dev/null 2>&1; then
    waited=0
    while $SUDO fuser /var/lib/dpkg/lock-frontend /var/lib/dpkg/lock /var/lib/apt/lists/lock \
        >/dev/null 2>&1; do
        [ "$waited" -eq 0 ] && echo "mint: another apt/dpkg is running; waiting for it (up to ${wait} s)" >&2
        [ "$waited" -ge "$wait" ] && { echo "mint: dpkg is still locked after ${wait} s; rerun when the other apt has finished" >&2; exit 1; }
        sleep 5
        waited=$((waited + 5))
    done
fi
$SUDO apt-get -o DPkg::Lock::Timeout="$wait" update -qq
# shellcheck disable=SC2086
$SUDO apt-get -o DPkg::Lock::Timeout="$wait" install -y -qq $missing >/dev/null
