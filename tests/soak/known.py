"""KNOWN: open defects the soak is known to find, while they are fixed. A case
that matches an entry still runs (unless running it would hang the soak)
and still reports what it finds, but a failure there does not count against
the run; a matched case that passes is counted too, so that an entry whose
fix has landed shows up as "matched N, failed 0" and can be deleted.
Delete an entry as soon as its fix is merged; --no-known ignores them all.
"""
# (name, predicate on the case parameters, whether the case may run at all);
# empty while no defect is open
KNOWN = []


class Known:
    def __init__(self, enabled=True):
        self.entries = KNOWN if enabled else []

    def skip(self, case):
        """Marks the case with the first entry it matches; True if it must not run."""
        for name, match, runs in self.entries:
            if match(case.params):
                case.known = name
                return not runs
        return False
