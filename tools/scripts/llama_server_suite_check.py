"""Reads the JUnit XML of a llama.cpp server-suite run (tools/scripts/llama-server-suite.sh) and
the list of tests expected to fail (each with its reason): prints the counts and the share of the
tests that ran which passed, and exits 1 when a test failed that is not on the list.

    llama_server_suite_check.py RESULTS.xml EXPECTED
EXPECTED: one test per line, "file.py::test_name[params]  # why", '#' lines are comments; a
name may hold shell wildcards ('*' any text; '[' as itself).
"""
import fnmatch
import sys
import xml.etree.ElementTree as ET


def load_expected(path):
    out = {}
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                name, _, why = line.partition("#")
                out[name.strip()] = why.strip()
    except FileNotFoundError:
        pass
    return out


def listed(name, expected):
    for k in expected:
        if name == k or fnmatch.fnmatchcase(name, k.replace("[", "[[]")):
            return k
    return None


def main():
    results, expected_path = sys.argv[1], sys.argv[2]
    expected = load_expected(expected_path)
    counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
    unexpected, now_pass, skip_reasons = [], [], {}
    for case in ET.parse(results).getroot().iter("testcase"):
        file = (case.get("file") or case.get("classname", "").replace(".", "/") + ".py").split("/")[-1]
        name = "%s::%s" % (file, case.get("name"))
        if case.find("skipped") is not None:
            counts["skipped"] += 1
            msg = case.find("skipped").get("message", "")
            skip_reasons[msg[:90]] = skip_reasons.get(msg[:90], 0) + 1
            continue
        bad = case.find("failure") if case.find("failure") is not None else case.find("error")
        if bad is None:
            counts["passed"] += 1
            k = listed(name, expected)
            if k and "*" not in k:  # a wildcard line covers passing tests of its file too
                now_pass.append(name)
            continue
        counts["failed" if bad.tag == "failure" else "error"] += 1
        if not listed(name, expected):
            unexpected.append((name, (bad.get("message") or "").splitlines()[0][:160] if bad.get("message") else ""))
    ran = counts["passed"] + counts["failed"] + counts["error"]
    share = 100.0 * counts["passed"] / ran if ran else 0.0
    print("llama.cpp server suite against mint-serve: %d passed, %d failed, %d errors, %d skipped;"
          " %.1f%% of the %d tests that ran passed" % (counts["passed"], counts["failed"],
                                                        counts["error"], counts["skipped"], share, ran))
    for why, n in sorted(skip_reasons.items(), key=lambda x: -x[1]):
        print("  skipped %4d: %s" % (n, why))
    for name in now_pass:
        print("  listed as failing but passed: %s" % name)
    for name, msg in unexpected:
        print("  FAILED (not in %s): %s  %s" % (expected_path.split("/")[-1], name, msg))
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
