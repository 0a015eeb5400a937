#!/bin/sh
# test.sh - installs what is missing, builds, and runs the whole test suite (the README's second
# command); it ends with the counts of Criterion cases and the skips grouped by what would enable
# them, each with how (tools/scripts/test-summary.sh).
# Tests that need real data read it from MINT_TEST_DATA; when that is unset and ../shared/data
# exists next to the checkout, it is used.
set -eu
cd "$(dirname "$0")/../.."
# Test needs beyond the build: python3-jinja2 is test_jinja's oracle (tests/chat/render_ref.py).
tools/scripts/deps.sh python3 python3-jinja2
tools/scripts/build.sh
if [ -z "${MINT_TEST_DATA:-}" ] && [ -d ../shared/data ]; then
    MINT_TEST_DATA=$(cd ../shared/data && pwd)
    export MINT_TEST_DATA
fi
if [ -n "${MINT_TEST_DATA:-}" ]; then
    echo "mint: test data from MINT_TEST_DATA=$MINT_TEST_DATA" >&2
else
    echo "mint: MINT_TEST_DATA is not set: the cases that need the project's test data folder will be skipped (set MINT_TEST_DATA=DIR; README, \"Tests\")" >&2
fi
rc=0
# shellcheck disable=SC2086
ctest --test-dir "${MINT_BUILD_DIR:-build}" --output-on-failure ${MINT_CTEST_ARGS:-} || rc=$?
# The Criterion cases over every suite, the skip reasons, and "N passed, M failed, K skipped".
tools/scripts/test-summary.sh "${MINT_BUILD_DIR:-build}" || rc=1
exit "$rc"
