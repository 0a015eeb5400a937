#!/bin/sh
# ci-neon.sh - cross-builds mint for aarch64 and runs the kernel tests under qemu-user. x86-64
# Debian host; needs root for apt-get. Three passes:
#   1. qemu's default CPU ("max": dotprod and fp16), so neondot is chosen: test_kernels,
#      test_iquant_levels and test_vec check both NEON levels against the reference, the other
#      suites run on neondot;
#   2. MINT_ISA=neon: the model and op suites forced down to baseline NEON;
#   3. QEMU_CPU=cortex-a53 (plain Armv8.0, no dotprod): detection must pick neon (a neondot
#      instruction would be SIGILL there), and every NEON kernel runs there (test_kernels: a
#      dotprod instruction in the baseline level would stop it; the model on baseline NEON is
#      pass 2's).
#
# The aarch64 builds of xxHash, json-c and Criterion are Debian's arm64 packages, unpacked into a
# sysroot in the build folder rather than installed with multiarch: Criterion's dependency
# libnanomsg5 is a binNMU on amd64 (1.1.5+dfsg-1.1+b1) but not on arm64 (1.1.5+dfsg-1.1), and a
# Multi-Arch: same package must have one version for all architectures, so installing
# libcriterion-dev:arm64 would remove the native libcriterion-dev. apt runs on a private state
# folder with arm64 as its only architecture, so the machine's dpkg and apt set-up is untouched.
#
# Environment: MINT_NEON_BUILD_DIR (default build-neon), MINT_TEST_DATA (real data; default
# ../shared/data when it exists), MINT_NEON_TESTS (a ctest -R regex that replaces each pass's
# own selection, for quick local runs).
set -eu
cd "$(dirname "$0")/../.."
root=$(pwd)
build=${MINT_NEON_BUILD_DIR:-build-neon}
mkdir -p "$build"
build=$(cd "$build" && pwd)
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
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# ---- arm64 sysroot from Debian's packages ------------------------------------------------------
# apt resolves the dependency closure of the -dev packages for arm64 against an empty
# dpkg status (so libc6 and everything below it come along: the sysroot is self-contained), and
# only downloads; dpkg -x unpacks each package. Rebuilt when this script changes.
sysroot="$build/sysroot"
stamp="$sysroot/.mint-sysroot"
want=$(cksum <"$root/tools/scripts/ci-neon.sh")
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
        libcriterion-dev libxxhash-dev libjson-c-dev libmicrohttpd-dev libpcre2-dev \
        libcurl4-openssl-dev >/dev/null
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
    -DMINT_AARCH64_SYSROOT="$sysroot" -DMINT_TIMEOUT_SCALE="${MINT_TIMEOUT_SCALE:-10}" >/dev/null
# Only the suites the passes below run (the whole tree when MINT_NEON_TESTS picks its own).
suites="test_kernels test_kernels_edge test_iquant_levels test_vec test_ops test_quant test_ops_ref
    test_model"
if [ -n "${MINT_NEON_TESTS:-}" ]; then
    cmake --build "$build" -j2
else
    # shellcheck disable=SC2086
    cmake --build "$build" -j2 --target $suites
fi

# ---- tests under qemu ----------------------------------------------------------------------------
if [ -z "${MINT_TEST_DATA:-}" ] && [ -d ../shared/data ]; then
    MINT_TEST_DATA=$(cd ../shared/data && pwd)
fi
if [ -n "${MINT_TEST_DATA:-}" ]; then
    export MINT_TEST_DATA
else
    echo "ci-neon: MINT_TEST_DATA is not set: tests that need real model data will be skipped" >&2
fi
# pass NAME REGEX [VAR=VALUE ...]: runs the suites matching REGEX with the environment given.
pass() {
    name=$1 regex=${MINT_NEON_TESTS:-$2}
    shift 2
    echo "== ci-neon: tests under qemu-aarch64, $name"
    env "$@" ctest --test-dir "$build" --output-on-failure -R "$regex"
}
pass "default CPU (neondot)" '^test_(kernels|kernels_edge|iquant_levels|vec|ops|quant|ops_ref|model)$'
pass "MINT_ISA=neon (baseline NEON forced)" '^test_(ops_ref|model)$' MINT_ISA=neon
pass "QEMU_CPU=cortex-a53 (no dotprod: neon detected)" '^test_(kernels|vec)$' QEMU_CPU=cortex-a53
echo "== ci-neon passed in $(($(date +%s) - start)) s"
