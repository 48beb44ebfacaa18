"""Whether a long smx call lets other Python threads run (the GIL released), as the front-end tests check it."""
import threading
import time


def stamps_inside(call, repeat):
    """Runs call() repeat times on a second thread while this one records the time every millisecond; returns how
    many of those times fall strictly inside the middle half of the second thread's run (a few or more: this thread
    ran during the calls, so they released the GIL)."""
    span, stamps = [], []

    def work():
        t0 = time.perf_counter()
        for _ in range(repeat):
            call()
        span.extend([t0, time.perf_counter()])

    th = threading.Thread(target=work)
    th.start()
    while th.is_alive():
        stamps.append(time.perf_counter())
        time.sleep(0.001)
    th.join()
    t0, t1 = span
    return len([s for s in stamps if t0 + (t1 - t0) * 0.25 < s < t1 - (t1 - t0) * 0.25])
