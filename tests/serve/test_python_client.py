#!/usr/bin/env python3
"""The Python client and the TRL / verl reward functions against a real `sparserl serve` (CPU
emulator, bearer token, a registered matrix), started on a free loopback port. Run by ctest:

    python3 tests/serve/test_python_client.py --sparserl build/src/cli/sparserl
"""

import argparse
import json
import os
import sys
import tempfile
import unittest

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools")
sys.path.insert(0, TOOLS)
import sparserl_client  # noqa: E402
import sparserl_reward  # noqa: E402
from serve_load_test import PROGRAMS, random_matrix  # noqa: E402

SPARSERL = "sparserl"
TOKEN = "test-token-7f3a"
GOOD, WRONG, BROKEN, PROSE = (p[1] for p in PROGRAMS)
MATRIX = random_matrix(200, 5, 11, True)


def write_mtx(path: str, m: dict) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write("%%MatrixMarket matrix coordinate real general\n")
        f.write(f"{m['shape'][0]} {m['shape'][1]} {len(m['rows'])}\n")
        for r, c, v in zip(m["rows"], m["cols"], m["values"]):
            f.write(f"{r + 1} {c + 1} {v}\n")


class python_client_test(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory(prefix="sparserl-serve-py-")
        token_file = os.path.join(cls.dir.name, "token")
        with open(token_file, "w", encoding="utf-8") as f:
            f.write(TOKEN + "\n")
        os.mkdir(os.path.join(cls.dir.name, "set"))
        write_mtx(os.path.join(cls.dir.name, "set", "grid200.mtx"), MATRIX)
        cls.server_context = sparserl_client.local_server(
            SPARSERL, "--device", "cpu", "--workers", "2", "--token", token_file, "--matrices",
            os.path.join(cls.dir.name, "set"), "--max-programs", "3")
        cls.server = cls.server_context.__enter__()
        cls.client = sparserl_client.SparserlClient(cls.server.url, token=TOKEN)
        os.environ["SPARSERL_URL"] = cls.server.url
        os.environ["SPARSERL_TOKEN_FILE"] = token_file

    @classmethod
    def tearDownClass(cls):
        cls.server_context.__exit__(None, None, None)
        cls.dir.cleanup()

    def test_health_needs_no_token(self):
        health = sparserl_client.SparserlClient(self.server.url).health()
        self.assertEqual(health["status"], "ok")
        self.assertEqual(health["executor"], "cpu")
        self.assertTrue(health["token_required"])
        self.assertEqual(health["max_programs"], 3)
        self.assertEqual(health["registered_matrices"], 1)

    def test_evaluate_every_tier(self):
        reply = self.client.evaluate([GOOD, WRONG, BROKEN], MATRIX, request_id=42)
        self.assertEqual(reply["id"], 42)
        results = reply["results"]
        self.assertEqual([r["outcome"] for r in results],
                         ["correct", "wrong_result", "compile_error"], json.dumps(results)[:4000])
        self.assertEqual([r["reward"] for r in results], [1.0, 0.0, -0.5])

    def test_refusals_raise_with_the_servers_message(self):
        anonymous = sparserl_client.SparserlClient(self.server.url)
        with self.assertRaises(sparserl_client.ServiceError) as e:
            anonymous.evaluate([PROSE], MATRIX)
        self.assertEqual(e.exception.status, 401)
        bad = dict(MATRIX, shape=[10, 10])
        with self.assertRaises(sparserl_client.ServiceError) as e:
            self.client.evaluate([PROSE], bad)
        self.assertEqual(e.exception.status, 400)
        self.assertIn("is outside [0, 10)", e.exception.message)
        with self.assertRaises(sparserl_client.ServiceError) as e:
            self.client.evaluate([PROSE] * 4, MATRIX)
        self.assertIn("at most 3 per request", e.exception.message)

    def test_rewards_splits_batches_to_the_servers_limit(self):
        rewards = self.client.rewards([PROSE, GOOD, PROSE, WRONG, GOOD], MATRIX)
        self.assertEqual(rewards, [-1.0, 1.0, -1.0, 0.0, 1.0])

    def test_trl_reward_function(self):
        n = 4
        completions = [GOOD, [{"role": "assistant", "content": GOOD}], PROSE, WRONG]
        rewards = sparserl_reward.sparserl_reward(
            prompts=["p"] * n, completions=completions, rows=[MATRIX["rows"]] * n,
            cols=[MATRIX["cols"]] * n, shape=[MATRIX["shape"]] * n,
            values=[MATRIX["values"]] * n)
        self.assertEqual(rewards, [1.0, 1.0, -1.0, 0.0])
        by_name = sparserl_reward.make_trl_reward(self.server.url, TOKEN)(
            prompts=["p"], completions=[GOOD], matrix_name=["grid200"])
        self.assertEqual(by_name, [1.0])

    def test_verl_compute_score(self):
        truth = json.dumps({"rows": MATRIX["rows"], "cols": MATRIX["cols"],
                            "shape": MATRIX["shape"], "values": MATRIX["values"]})
        self.assertEqual(sparserl_reward.compute_score("sparserl", GOOD, truth), 1.0)
        self.assertEqual(sparserl_reward.compute_score("sparserl", BROKEN, truth), -0.5)
        self.assertEqual(
            sparserl_reward.compute_score("sparserl", GOOD, {"name": "grid200"}, {"op": "spmv"}),
            1.0)
        batch = sparserl_reward.compute_score_batch(
            ["sparserl"] * 3, [GOOD, PROSE, GOOD], [truth, truth, {"name": "grid200"}],
            [None, None, None])
        self.assertEqual(batch, [1.0, -1.0, 1.0])

    def test_metrics_show_the_work(self):
        self.client.evaluate([PROSE], MATRIX)
        text = self.client.metrics()
        self.assertIn('sparserl_verdicts_total{outcome="no_program"}', text)
        evaluated = [line for line in text.splitlines()
                     if line.startswith("sparserl_programs_evaluated_total ")]
        self.assertEqual(len(evaluated), 1)
        self.assertGreaterEqual(float(evaluated[0].split()[1]), 1)

    def test_zz_sigterm_drains_and_exits_zero(self):  # last: it stops the shared server
        code = self.server.stop()
        self.assertEqual(code, 0)
        self.assertIn("sparserl serve: stopped", self.server.output())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--sparserl", required=True)
    args, rest = parser.parse_known_args()
    SPARSERL = args.sparserl
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)
