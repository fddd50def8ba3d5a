"""Pass/fail counting for the test scripts: check() records a result and
prints a failure, finish() prints "N passed, M failed" and gives the exit
status (1 when anything failed or nothing was checked)."""

PASSED = FAILED = 0


def check(ok, what):
    global PASSED, FAILED
    if ok:
        PASSED += 1
    else:
        FAILED += 1
        print(f"FAIL: {what}", flush=True)


def finish():
    print(f"{PASSED} passed, {FAILED} failed")
    return 1 if FAILED or not PASSED else 0
