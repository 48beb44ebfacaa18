"""One soak case: its seed, the parameters that describe it (printed as the
reproduction), the inputs worth saving, and what went wrong."""
import json

import numpy as np


class Case:
    def __init__(self, seed, surface):
        self.seed = seed
        self.params = {"surface": surface}
        self.inputs = {}  # name -> array, saved next to a failure report
        self.failures = []
        self.known = None  # name of the KNOWN entry this case falls under

    def fail(self, msg):
        self.failures.append(str(msg))

    def expect(self, cond, msg):
        if not cond:
            self.fail(msg)
        return cond

    def describe(self):
        def plain(v):
            if isinstance(v, (np.integer,)):
                return int(v)
            if isinstance(v, (np.floating,)):
                return float(v)
            if isinstance(v, (list, tuple)):
                return [plain(e) for e in v]
            return v
        return json.dumps({k: plain(v) for k, v in self.params.items()}, sort_keys=True)
