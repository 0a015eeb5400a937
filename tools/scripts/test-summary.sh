#!/bin/sh
# test-summary.sh - the closing lines of tools/scripts/test.sh, from the log CTest keeps of its last
# run (BUILD/Testing/Temporary/LastTest.log): the Criterion cases passed, failed and skipped over
# every suite; the skipped ones grouped by what would enable them, one line per enabler with how
# many cases wait for it and how to provide it; and last the line "N passed, M failed, K skipped".
# A CTest entry that is not a Criterion suite (a shell test) counts as one case. Exit status: 1
# when anything failed, else 0.
#   tools/scripts/test-summary.sh [BUILD_DIR]
# A skip reason is classified by its words: the test data's own messages begin "needs the test
# data" / "needs a test data file" (tests/helpers/helpers.c); the others are matched below. A
# reason no rule knows is printed as it is, under "other", so it is never lost.
set -eu
log="${1:-${MINT_BUILD_DIR:-build}}/Testing/Temporary/LastTest.log"
[ -f "$log" ] || { echo "test-summary: no $log (run ctest first)" >&2; exit 1; }
awk '
    # The enabler of a skip reason, and how to provide it; "" for a reason no rule knows.
    function classify(r,    m) {
        detail = ""
        if (r ~ /^needs the test data|MINT_TEST_DATA is not set/)
            return "the test data: set MINT_TEST_DATA=DIR, the project'"'"'s test data folder (README, \"Tests\")"
        if (r ~ /^needs a test data file|test data file .* is missing/) {
            detail = r; sub(/^needs a test data file: /, "", detail); sub(/ is missing$/, "", detail)
            return "files missing from the test data folder: bring MINT_TEST_DATA'"'"'s folder up to date"
        }
        if (r ~ /needs a browser|chromium/)
            return "Chromium: apt-get install chromium (or MINT_CHROMIUM=PATH)"
        if (r ~ /^nginx is not installed/) return "nginx: apt-get install nginx-light"
        if (r ~ /^node is not installed/) return "Node.js: apt-get install nodejs"
        if (r ~ /^npm is not installed/) return "npm: apt-get install npm"
        if (r ~ /^python3 is not installed/) return "python3: apt-get install python3"
        if (r ~ /npm-deps\.sh failed/)
            return "the npm packages (OpenAI'"'"'s client, playwright-core): run tools/scripts/npm-deps.sh where the npm registry is reachable"
        if (r ~ /python3-jinja2/) return "python3-jinja2: apt-get install python3-jinja2"
        if (r ~ /MINT_TEST_PPL=full/)
            return "the full perplexity comparison: MINT_TEST_PPL=full (minutes)"
        if (r ~ /^this CPU has no .* kernels/) {
            detail = r; sub(/^this CPU has no /, "", detail); sub(/ kernels$/, "", detail)
            return "another CPU: nothing to install here (CI runs the NEON levels under qemu: tools/scripts/ci-neon.sh)"
        }
        if (r ~ /^no hashes recorded for/) {
            detail = r; sub(/^no hashes recorded for /, "", detail)
            return "golden hashes recorded for this kernel level: MINT_GOLDEN_PRINT=1 (tests/test_golden.c)"
        }
        if (r ~ /is not readable here/)
            return "a readable sysfs (/sys is hidden here; nothing to install)"
        return ""
    }
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
        key = classify(reason)
        if (key == "") key = "other: " reason
        if (!(key in count)) order[++n] = key
        count[key]++
        # Up to three distinct details (a file, a kernel level) as examples.
        if (detail != "" && ndet[key] < 3 && index(dets[key] ", ", detail ", ") == 0) {
            dets[key] = (ndet[key] ? dets[key] ", " : "") detail
            ndet[key]++
        }
    }
    in_test && /^Test (Passed|Failed)\./ {
        if (!synth) { if ($2 == "Passed.") passed++; else failed++ }
        in_test = 0
    }
    END {
        # The largest group first; the unknown reasons last.
        for (i = 1; i <= n; i++)
            for (j = i + 1; j <= n; j++) {
                a = order[i]; b = order[j]
                if ((a ~ /^other: /) > (b ~ /^other: /) ||
                    ((a ~ /^other: /) == (b ~ /^other: /) && count[b] > count[a])) {
                    order[i] = b; order[j] = a
                }
            }
        if (n > 0) print "skipped cases, by what would enable them:"
        for (i = 1; i <= n; i++) {
            k = order[i]
            if (k ~ /^other: /)
                line = sprintf("  %4d %s skipped: %s", count[k], count[k] == 1 ? "case" : "cases", substr(k, 8))
            else
                line = sprintf("  %4d %s %s", count[k], count[k] == 1 ? "case needs" : "cases need", k)
            if (ndet[k]) line = line " (e.g. " dets[k] ")"
            print line
        }
        printf "%d passed, %d failed, %d skipped\n", passed, failed, skipped
        exit failed > 0
    }
' "$log"
