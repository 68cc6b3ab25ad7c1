"""Client for the sparserl reward service (`sparserl serve`; docs/reward-service.md).

Python 3.11 standard library only (http.client, json), so it drops into any RL engine's worker.

    from sparserl_client import SparserlClient, coo_matrix
    client = SparserlClient("http://127.0.0.1:8808", token=None)
    reply = client.evaluate(["FORMAT: CSR\\nLAUNCH: ...\\n<cuda source>"],
                            matrix=coo_matrix(rows=[0, 1], cols=[1, 0], shape=[2, 2]))
    reply["results"][0]["reward"]

A 429 (queue full) is retried after the server's Retry-After, for up to `max_wait_s` in all;
every other refusal raises ServiceError with the server's one-line message. One client may be
shared by threads: each thread keeps its own keep-alive connection.

`local_server(binary)` starts `sparserl serve` on a free loopback port for tests and one-machine
set-ups, and stops it (SIGTERM: queued work drains) on exit.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import queue
import re
import signal
import subprocess
import threading
import time
import urllib.parse
from typing import Any, Iterator, Sequence

__all__ = [
    "ServiceError",
    "SparserlClient",
    "ServerProcess",
    "coo_matrix",
    "matrix_from_sft",
    "local_server",
    "read_token",
]

DEFAULT_URL = "http://127.0.0.1:8808"


class ServiceError(Exception):
    """A refusal by the service (status, its message) or no answer at all (status None)."""

    def __init__(self, status: int | None, message: str, retry_after: float | None = None):
        super().__init__(f"sparserl service: {status or 'no answer'}: {message}")
        self.status = status
        self.message = message
        self.retry_after = retry_after


def coo_matrix(rows: Sequence[int], cols: Sequence[int], shape: Sequence[int],
               values: Sequence[float] | None = None) -> dict:
    """An inline matrix in the SFT JSONL layout: 0-based (row, col) of each nonzero and the
    [rows, cols] shape. Without values the service gives each nonzero a hashed value in
    +-[0.5, 1) (src/sparse/pattern_values.h) and a position given twice counts once; with values
    duplicates add."""
    m = {"rows": list(rows), "cols": list(cols), "shape": list(shape)}
    if values is not None:
        m["values"] = list(values)
    return m


def matrix_from_sft(record: dict) -> dict:
    """The matrix of one SFT JSONL record (fields rows, cols, shape; values when present)."""
    return coo_matrix(record["rows"], record["cols"], record["shape"], record.get("values"))


def read_token(path: str) -> str:
    """A --token file's token (its content less trailing whitespace)."""
    with open(path, encoding="utf-8") as f:
        return f.read().rstrip()


class SparserlClient:
    """Calls one sparserl reward service."""

    def __init__(self, url: str = DEFAULT_URL, token: str | None = None,
                 timeout_s: float = 600.0, max_wait_s: float = 600.0):
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme != "http" or not parsed.hostname:
            raise ValueError(f"{url}: expected http://HOST:PORT")
        self.url = url
        self._host = parsed.hostname
        self._port = parsed.port or 80
        self._prefix = parsed.path.rstrip("/")
        self._token = token
        self._timeout_s = timeout_s
        self._max_wait_s = max_wait_s
        self._local = threading.local()

    # -- the API ---------------------------------------------------------------------------------

    def health(self) -> dict:
        """GET /v1/health: status, executor, workers, queue depth and the limits."""
        status, _, body = self._send("GET", "/v1/health")
        if status not in (200, 503):  # 503: draining, still a health report
            raise ServiceError(status, _error_text(body))
        return json.loads(body)

    def metrics(self) -> str:
        """GET /metrics: the Prometheus text."""
        status, _, body = self._send("GET", "/metrics")
        if status != 200:
            raise ServiceError(status, _error_text(body))
        return body.decode("utf-8")

    def evaluate(self, programs: Sequence[str], matrix: dict | None = None, *,
                 name: str | None = None, op: str = "spmv", k: int | None = None,
                 request_id: str | int | None = None) -> dict:
        """POST /v1/evaluate: one verdict (with its reward) per program, in order.

        `matrix` is inline (coo_matrix) or give `name` for one of the server's --matrices."""
        if (matrix is None) == (name is None):
            raise ValueError("give exactly one of matrix= (inline) or name= (registered)")
        body: dict[str, Any] = {"matrix": matrix if matrix is not None else {"name": name},
                                "op": op, "programs": list(programs)}
        if k is not None:
            body["k"] = k
        if request_id is not None:
            body["id"] = request_id
        payload = json.dumps(body).encode("utf-8")
        deadline = time.monotonic() + self._max_wait_s
        while True:
            status, headers, reply = self._send("POST", "/v1/evaluate", payload)
            if status == 200:
                return json.loads(reply)
            retry_after = _retry_after(headers)
            if status in (429, 503) and retry_after is not None:
                if time.monotonic() + retry_after <= deadline:
                    time.sleep(retry_after)
                    continue
            raise ServiceError(status, _error_text(reply), retry_after)

    def rewards(self, programs: Sequence[str], matrix: dict | None = None, **kwargs) -> list[float]:
        """Just the rewards, split into requests of at most the server's max_programs."""
        limit = self._max_programs()
        out: list[float] = []
        for start in range(0, len(programs), limit):
            reply = self.evaluate(programs[start:start + limit], matrix, **kwargs)
            out.extend(float(r["reward"]) for r in reply["results"])
        return out

    # -- transport -------------------------------------------------------------------------------

    def _max_programs(self) -> int:
        if not hasattr(self, "_max_programs_cached"):
            self._max_programs_cached = int(self.health().get("max_programs", 64))
        return self._max_programs_cached

    def _connection(self, fresh: bool) -> http.client.HTTPConnection:
        held = getattr(self._local, "conn", None)
        if held is None or fresh:
            if held is not None:
                held.conn.close()
            held = _held_connection(
                http.client.HTTPConnection(self._host, self._port, timeout=self._timeout_s))
            self._local.conn = held
            self._local.used = False
        return held.conn

    def _drop_connection(self) -> None:
        held = getattr(self._local, "conn", None)
        if held is not None:
            held.conn.close()
        self._local.conn = None

    def _send(self, method: str, path: str, body: bytes | None = None):
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        # A kept-alive connection the server has since closed fails before any reply: that
        # request was never read, so it is sent again once on a new connection.
        for attempt in range(2):
            conn = self._connection(fresh=attempt > 0)
            reused = self._local.used
            try:
                conn.request(method, self._prefix + path, body=body, headers=headers)
                response = conn.getresponse()
                data = response.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as e:
                self._drop_connection()
                if reused and attempt == 0:
                    continue
                raise ServiceError(None, f"{method} {self.url}{path}: {e}") from e
            except OSError as e:
                self._drop_connection()
                raise ServiceError(None, f"{method} {self.url}{path}: {e}") from e
            self._local.used = True
            if response.getheader("Connection", "").lower() == "close":
                self._drop_connection()
            return response.status, response, data
        raise AssertionError("unreachable")


class _held_connection:
    """A thread's connection, closed when the thread (and so its thread-local) goes away."""

    def __init__(self, conn: http.client.HTTPConnection):
        self.conn = conn

    def __del__(self):
        self.conn.close()


def _retry_after(response) -> float | None:
    value = response.getheader("Retry-After") if response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _error_text(body: bytes) -> str:
    try:
        return str(json.loads(body)["error"])
    except (ValueError, KeyError, TypeError):
        return body.decode("utf-8", "replace")[:500]


class ServerProcess:
    """A running `sparserl serve` started by local_server()."""

    def __init__(self, process: subprocess.Popen, url: str, lines: "queue.Queue[str]",
                 pump: threading.Thread):
        self.process = process
        self.url = url
        self._lines = lines
        self._pump = pump

    def stop(self, timeout_s: float = 120.0) -> int:
        """SIGTERM (the queue drains, admitted requests are answered), then the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise
        self._pump.join(timeout=10)  # its last lines, up to the pipe's end
        if self.process.stdout is not None and not self._pump.is_alive():
            self.process.stdout.close()
        return code

    def output(self) -> list[str]:
        """The stdout lines printed so far."""
        lines = []
        while True:
            try:
                lines.append(self._lines.get_nowait())
            except queue.Empty:
                return lines


@contextlib.contextmanager
def local_server(binary: str = "sparserl", *args: str,
                 startup_timeout_s: float = 120.0) -> Iterator[ServerProcess]:
    """`binary serve --listen 127.0.0.1:0 *args`, yielded once it prints its address."""
    process = subprocess.Popen([binary, "serve", "--listen", "127.0.0.1:0", *args],
                               stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:  # keeps reading, so the server never blocks on a full pipe
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line.rstrip("\n"))

    pump_thread = threading.Thread(target=pump, daemon=True)
    pump_thread.start()
    server = None
    try:
        try:
            first = lines.get(timeout=startup_timeout_s)
        except queue.Empty:
            first = ""
        match = re.search(r"listening on (http://\S+)", first)
        if not match:
            process.kill()
            raise RuntimeError(f"{binary} serve did not start (exit {process.wait()}): {first!r}")
        server = ServerProcess(process, match.group(1), lines, pump_thread)
        yield server
    finally:
        if process.poll() is None:
            (server.stop() if server else process.kill())


if __name__ == "__main__":  # a quick look at a running service
    import sys

    client = SparserlClient(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_URL,
                            token=os.environ.get("SPARSERL_TOKEN"))
    print(json.dumps(client.health(), indent=2))
