#!/usr/bin/env python3
"""Bounded load test of the sparserl reward service on loopback.

Starts `sparserl serve` on a free port (or uses --url), warms the caches with one request per
(matrix, program), then sends up to --requests requests from --concurrency threads for at most
--time-limit seconds (issuing stops at whichever comes first; every issued request is awaited).
Each request carries a unique id; the test fails unless every id is answered exactly once, with
the reward its program deserves. Prints sustained requests/s and p50/p99 latency.

    python3 tools/serve_load_test.py --sparserl build/src/cli/sparserl              # CPU emulator
    python3 tools/serve_load_test.py --sparserl build/src/cli/sparserl --device gpu # GPU workers

429s (queue full) are retried after Retry-After and counted; a request's latency spans its
retries. Exit status 0 on success, 1 on any lost, duplicated, failed or mis-scored request.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sparserl_client import ServiceError, SparserlClient, coo_matrix, local_server  # noqa: E402

CSR_SIGNATURE = ('extern "C" __global__ void spmv_csr(int rows, int cols, int nnz, '
                 'const int* __restrict__ row_ptr, const int* __restrict__ col_idx, '
                 'const float* __restrict__ values, const float* __restrict__ x, '
                 'float* __restrict__ y)')


def csr_program(last_line: str) -> str:
    return ("FORMAT: CSR\nLAUNCH: block=128 rows_per_block=128\n" + CSR_SIGNATURE + " {\n"
            "  int row = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "  if (row >= rows) return;\n"
            "  float s = 0.0f;\n"
            "  for (int i = row_ptr[row]; i < row_ptr[row + 1]; ++i) s += values[i] * x[col_idx[i]];\n"
            f"  {last_line}\n}}\n")


# (name, completion, expected outcome); the rewards follow from the outcome.
PROGRAMS = [
    ("correct", csr_program("y[row] = s;"), "correct"),
    ("wrong", csr_program("y[row] = 2.0f * s;"), "wrong_result"),
    ("compile_error", csr_program("y[row] = s"), "compile_error"),
    ("prose", "A CSR kernel with one thread per row would do.", "no_program"),
]
TIER_REWARD = {"wrong_result": 0.0, "compile_error": -0.5, "no_program": -1.0}


def random_matrix(n: int, per_row: int, seed: int, with_values: bool) -> dict:
    rng = random.Random(seed)
    rows, cols, values = [], [], []
    for r in range(n):
        for c in sorted(rng.sample(range(n), per_row)):
            rows.append(r)
            cols.append(c)
            values.append(round(rng.uniform(-1, 1), 4))
    return coo_matrix(rows, cols, [n, n], values if with_values else None)


MATRICES = [random_matrix(512, 8, 1, True), random_matrix(1024, 4, 2, False),
            random_matrix(256, 16, 3, True)]


def check_result(result: dict, expected: str, executor: str) -> str:
    """"" when the verdict is what its program deserves, else why not."""
    if result.get("outcome") != expected:
        return f"outcome {result.get('outcome')} ({result.get('failure')}), expected {expected}"
    reward = float(result["reward"])
    if expected == "correct":
        # CPU: exactly 1 (no timing). GPU: 1 + speed term, clipped to [-0.9, 2], less at most
        # 0.05 memory penalty: always above every failing tier.
        ok = reward == 1.0 if executor == "cpu" else 0.05 <= reward <= 3.0
        return "" if ok else f"reward {reward} for a correct program on {executor}"
    return "" if reward == TIER_REWARD[expected] else f"reward {reward} for {expected}"


def percentile(sorted_values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    if not sorted_values:
        return float("nan")
    rank = max(1, min(len(sorted_values), int(-(-p * len(sorted_values) // 100))))
    return sorted_values[rank - 1]


class load_run:
    def __init__(self, client: SparserlClient, requests: int, time_limit_s: float,
                 programs_per_request: int, executor: str):
        self.client = client
        self.requests = requests
        self.time_limit_s = time_limit_s
        self.programs_per_request = programs_per_request
        self.executor = executor
        self.lock = threading.Lock()
        self.next_index = 0
        self.issued: list[str] = []
        self.answers: collections.Counter[str] = collections.Counter()
        self.latencies: list[float] = []
        self.failures: list[str] = []
        self.refused: set[str] = set()  # answered with an error status (not 429)
        self.retries_429 = 0

    def take(self, deadline: float) -> int | None:
        with self.lock:
            if self.next_index >= self.requests or time.monotonic() >= deadline:
                return None
            i = self.next_index
            self.next_index += 1
            self.issued.append(f"load-{i}")
            return i

    def one(self, i: int) -> None:
        request_id = f"load-{i}"
        picks = [PROGRAMS[(i + j) % len(PROGRAMS)] for j in range(self.programs_per_request)]
        matrix = MATRICES[i % len(MATRICES)]
        t0 = time.monotonic()
        while True:
            try:
                reply = self.client.evaluate([p[1] for p in picks], matrix, request_id=request_id)
                break
            except ServiceError as e:
                if e.status == 429:
                    with self.lock:
                        self.retries_429 += 1
                    time.sleep(e.retry_after or 1)
                    continue
                with self.lock:
                    self.failures.append(f"{request_id}: {e}")
                    self.refused.add(request_id)
                return
        latency = time.monotonic() - t0
        problems = [f"{request_id} results[{j}] ({p[0]}): {why}"
                    for j, (p, r) in enumerate(zip(picks, reply.get("results", [])))
                    if (why := check_result(r, p[2], self.executor))]
        if len(reply.get("results", [])) != len(picks):
            problems.append(f"{request_id}: {len(reply.get('results', []))} results for "
                            f"{len(picks)} programs")
        with self.lock:
            self.answers[str(reply.get("id"))] += 1
            self.latencies.append(latency)
            self.failures.extend(problems)

    def run(self, concurrency: int) -> float:
        deadline = time.monotonic() + self.time_limit_s

        def worker() -> None:
            while (i := self.take(deadline)) is not None:
                self.one(i)

        t0 = time.monotonic()
        threads = [threading.Thread(target=worker) for _ in range(concurrency)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return time.monotonic() - t0


def warm_up(client: SparserlClient, executor: str) -> None:
    """One request per matrix with every program: compiles and converts once, untimed."""
    for m in MATRICES:
        reply = client.evaluate([p[1] for p in PROGRAMS], m, request_id="warm-up")
        for p, r in zip(PROGRAMS, reply["results"]):
            why = check_result(r, p[2], executor)
            if why:
                raise SystemExit(f"serve load test: warm-up {p[0]}: {why}")


def drive(url: str, args: argparse.Namespace) -> int:
    client = SparserlClient(url, token=args.token, timeout_s=300, max_wait_s=0)
    health = client.health()
    executor = health["executor"]
    warm_up(client, executor)
    run = load_run(client, args.requests, args.time_limit, args.programs_per_request, executor)
    elapsed = run.run(args.concurrency)

    issued = set(run.issued)
    lost = sorted(issued - set(run.answers) - run.refused)
    duplicated = sorted(i for i, n in run.answers.items() if n > 1)
    unknown = sorted(set(run.answers) - issued)
    failures = run.failures + [f"{i}: never answered" for i in lost] + \
        [f"{i}: answered {run.answers[i]} times" for i in duplicated] + \
        [f"{i}: answer to a request never sent" for i in unknown]
    metrics = client.metrics()
    evaluated = next((float(line.split()[-1]) for line in metrics.splitlines()
                      if line.startswith("sparserl_programs_evaluated_total ")), 0.0)
    expected_programs = len(MATRICES) * len(PROGRAMS) + \
        sum(run.answers.values()) * args.programs_per_request
    if evaluated < expected_programs:
        failures.append(f"metrics: {evaluated:.0f} programs evaluated, expected at least "
                        f"{expected_programs}")

    latencies = sorted(run.latencies)
    answered = sum(run.answers.values())
    print(f"serve load test: executor {executor}, {health['workers']} workers, "
          f"{args.concurrency} client threads, {args.programs_per_request} program(s) per request")
    print(f"serve load test: {len(issued)} requests issued, {answered} answered, {len(lost)} lost, "
          f"{len(duplicated)} duplicated, {len(unknown)} unknown, {run.retries_429} 429-retries, "
          f"in {elapsed:.2f} s")
    if latencies:
        print(f"serve load test: sustained {answered / elapsed:.1f} requests/s "
              f"({answered * args.programs_per_request / elapsed:.1f} programs/s); latency "
              f"p50 {1000 * percentile(latencies, 50):.1f} ms, "
              f"p99 {1000 * percentile(latencies, 99):.1f} ms, "
              f"max {1000 * latencies[-1]:.1f} ms")
    for f in failures[:20]:
        print(f"serve load test: FAILED {f}")
    if answered == 0:
        failures.append("no request answered")
        print("serve load test: FAILED no request answered")
    return 1 if failures else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--sparserl", help="the sparserl binary: start `serve` on a free port")
    where.add_argument("--url", help="a running service instead")
    parser.add_argument("--token", help="bearer token of a --url service")
    parser.add_argument("--requests", type=int, default=200, help="at most this many requests")
    parser.add_argument("--time-limit", type=float, default=20.0,
                        help="stop issuing requests after this many seconds")
    parser.add_argument("--concurrency", type=int, default=8, help="client threads")
    parser.add_argument("--programs-per-request", type=int, default=1)
    parser.add_argument("--device", default="cpu", help="the server's --device (with --sparserl)")
    parser.add_argument("--workers", type=int, default=2, help="the server's --workers")
    args = parser.parse_args()
    if args.url:
        return drive(args.url, args)
    with local_server(args.sparserl, "--device", args.device, "--workers", str(args.workers),
                      "--queue", "256") as server:
        status = drive(server.url, args)
        sys.stdout.flush()
        code = server.stop()
        if code != 0:
            print(f"serve load test: FAILED the server exited {code} on SIGTERM")
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
