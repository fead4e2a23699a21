"""What bench/reads.py and bench/searches.py share: one keep-alive connection to the service on
loopback, and a read requested once untimed, then timed `rounds` times. A helper, not a benchmark."""
import http.client
import time

SLOW_MS = 20.0


class Client:
    """GET requests over one keep-alive connection to 127.0.0.1:`port`, named `who` in the User-Agent."""

    def __init__(self, port, who, timeout):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        self.agent = f"launchdir-bench {who}"

    def get(self, path):
        """The status and body of GET `path`."""
        self.conn.request("GET", path, headers={"User-Agent": self.agent})
        r = self.conn.getresponse()
        return r.status, r.read()

    def timed(self, path, rounds):
        """`path` requested once untimed, then `rounds` times: the last status and body, each timed
        request's milliseconds, and whether any body differed from the first (nothing is written
        while a benchmark reads, so the same read must give the same answer)."""
        status, body = self.get(path)
        first = body
        times = []
        varied = False
        for _ in range(rounds):
            t = time.perf_counter()
            status, body = self.get(path)
            times.append((time.perf_counter() - t) * 1000)
            varied |= body != first
        return status, body, times, varied
