#!/bin/sh
# ci-neon.sh - cross-builds mint for aarch64 and runs the kernel tests under qemu-user, once at
# the best level qemu's CPU offers (neondot: its default CPU "max" has dotprod and fp16) and once
# forced down to baseline NEON (MINT_ISA=neon). x86-64 Debian host; needs root for apt-get.
#
# The aarch64 builds of xxHash, json-c and Criterion are Debian's arm64 packages, unpacked into a
# sysroot in the build folder rather than installed with multiarch: Criterion's dependency
# libnanomsg5 is a binNMU on amd64 (1.1.5+dfsg-1.1+b1) but not on arm64 (1.1.5+dfsg-1.1), and a
# Multi-Arch: same package must have one version for all architectures, so installing
# libcriterion-dev:arm64 would remove the native libcriterion-dev. apt runs on a private state
# folder with arm64 as its only architecture, so the machine's dpkg and apt set-up is untouched.
#
# Environment: MINT_NEON_BUILD_DIR (default build-neon), MINT_TEST_DATA (real data; default
# ../shared/data when it exists), MINT_NEON_TESTS (ctest -R regex of the suites to run).
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
build=${MINT_NEON_BUILD_DIR:-build-neon}
mkdir -p "$build"
build=$(cd "$build" && pwd)
tests=${MINT_NEON_TESTS:-'^test_(kernels|quant|ops_ref|model)$'}
start=$(date +%s)

# ---- host tools ------------------------------------------------------------------------------
missing=""
for p in gcc-aarch64-linux-gnu qemu-user cmake make pkg-config; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "ci-neon: installing$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq $missing >/dev/null
fi

# ---- arm64 sysroot from Debian's packages ------------------------------------------------------
# apt resolves the dependency closure of the three -dev packages for arm64 against an empty
# dpkg status (so libc6 and everything below it come along: the sysroot is self-contained), and
# only downloads; dpkg -x unpacks each package. Rebuilt when this script changes.
sysroot="$build/sysroot"
stamp="$sysroot/.mint-sysroot"
want=$(cksum <"$root/tools/ci-neon.sh")
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    echo "== ci-neon: arm64 sysroot (Debian packages) in $sysroot"
    apt_dir="$build/apt"
    rm -rf "$sysroot" "$apt_dir"
    mkdir -p "$apt_dir/state/lists/partial" "$apt_dir/cache/archives/partial" "$sysroot"
    : >"$apt_dir/status"
    set -- -q -o Debug::NoLocking=1 -o APT::Architecture=arm64 -o APT::Architectures=arm64 \
        -o Dir::State="$apt_dir/state" -o Dir::State::status="$apt_dir/status" \
        -o Dir::Cache="$apt_dir/cache"
    apt-get "$@" update >/dev/null
    apt-get "$@" install --download-only -y --no-install-recommends \
        libcriterion-dev libxxhash-dev libjson-c-dev >/dev/null
    for deb in "$apt_dir"/cache/archives/*.deb; do dpkg -x "$deb" "$sysroot"; done
    # Debian's -dev symlinks are absolute (libz.so -> /lib/aarch64-linux-gnu/libz.so.1...):
    # point them inside the sysroot.
    find "$sysroot" -type l -lname '/*' | while read -r link; do
        ln -sfr "$sysroot$(readlink "$link")" "$link"
    done
    rm -rf "$apt_dir"
    echo "$want" >"$stamp"
fi

# ---- build -------------------------------------------------------------------------------------
echo "== ci-neon: cross-build (aarch64, -Werror)"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DMINT_WERROR=ON -DMINT_TESTS=ON \
    -DCMAKE_TOOLCHAIN_FILE="$root/tools/cmake/aarch64-linux-gnu.cmake" \
    -DMINT_AARCH64_SYSROOT="$sysroot" >/dev/null
cmake --build "$build" -j2

# ---- tests under qemu ----------------------------------------------------------------------------
if [ -z "${MINT_TEST_DATA:-}" ] && [ -d ../shared/data ]; then
    MINT_TEST_DATA=$(cd ../shared/data && pwd)
fi
if [ -n "${MINT_TEST_DATA:-}" ]; then
    export MINT_TEST_DATA
else
    echo "ci-neon: MINT_TEST_DATA is not set: tests that need real model data will be skipped" >&2
fi
echo "== ci-neon: tests under qemu-aarch64, best level (neondot on qemu's default CPU)"
ctest --test-dir "$build" --output-on-failure -R "$tests"
echo "== ci-neon: tests under qemu-aarch64, MINT_ISA=neon (baseline NEON)"
MINT_ISA=neon ctest --test-dir "$build" --output-on-failure -R "$tests"
echo "== ci-neon passed in $(($(date +%s) - start)) s"
