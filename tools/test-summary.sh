#!/bin/sh
# test-summary.sh - the closing lines of tools/test.sh, from the log CTest keeps of its last run
# (BUILD/Testing/Temporary/LastTest.log): the Criterion cases passed, failed and skipped over
# every suite, each skip reason once with how many cases gave it, and last the line
# "N passed, M failed, K skipped". A CTest entry that is not a Criterion suite (a shell test)
# counts as one case. Exit status: 1 when anything failed, else 0.
#   tools/test-summary.sh [BUILD_DIR]
set -eu
log="${1:-${MINT_BUILD_DIR:-build}}/Testing/Temporary/LastTest.log"
[ -f "$log" ] || { echo "test-summary: no $log (run ctest first)" >&2; exit 1; }
awk '
    /^[0-9]+\/[0-9]+ Testing: / { in_test = 1; synth = 0; next }
    in_test && /\[====\] Synthesis: / {
        # [====] Synthesis: Tested: T | Passing: P | Failing: F | Crashing: C
        for (i = 1; i <= NF; i++) {
            if ($i == "Passing:") passed += $(i + 1)
            if ($i == "Failing:" || $i == "Crashing:") failed += $(i + 1)
        }
        synth = 1
    }
    in_test && /^\[SKIP\] / {
        skipped++
        reason = $0
        sub(/^\[SKIP\] [^:]*::[^:]*: /, "", reason)
        # The file a skip names differs per case; the reason is the text before it.
        gsub(/ needs [^ ]+$/, " needs FILE", reason)
        gsub(/test data file [^ ]+ is missing/, "test data file FILE is missing", reason)
        if (!(reason in why)) order[++n] = reason
        why[reason]++
    }
    in_test && /^Test (Passed|Failed)\./ {
        if (!synth) { if ($2 == "Passed.") passed++; else failed++ }
        in_test = 0
    }
    END {
        if (n > 0) {
            print "skipped cases, by reason:"
            for (i = 1; i <= n; i++) printf "  %4d  %s\n", why[order[i]], order[i]
        }
        printf "%d passed, %d failed, %d skipped\n", passed, failed, skipped
        exit failed > 0
    }
' "$log"
