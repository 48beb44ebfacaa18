"""The pass/fail bookkeeping of the test scripts that ctest runs directly (not through unittest): check() prints
each failure and counts it, finish() prints the verdict and exits 1 after any failure."""
import sys

fails = 0


def check(ok, msg):
    global fails
    if not ok:
        fails += 1
        print("FAIL", msg)


def finish(name):
    print(name + ":", "FAILED" if fails else "ok")
    sys.exit(1 if fails else 0)
