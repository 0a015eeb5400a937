#!/bin/sh
# build.sh - configures and builds mint with CMake into $MINT_BUILD_DIR (default: build).
# Environment: MINT_WERROR=ON|OFF, MINT_CMAKE_ARGS (extra cmake arguments), MINT_BUILD_TYPE,
# MINT_BUILD_TARGETS (only these targets, space-separated; default: all).
set -eu
cd "$(dirname "$0")/../.."
build=${MINT_BUILD_DIR:-build}
# shellcheck disable=SC2086
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE="${MINT_BUILD_TYPE:-Release}" \
    -DMINT_WERROR="${MINT_WERROR:-OFF}" ${MINT_CMAKE_ARGS:-} >/dev/null
# shellcheck disable=SC2086
cmake --build "$build" -j"$(nproc)" ${MINT_BUILD_TARGETS:+--target $MINT_BUILD_TARGETS}
