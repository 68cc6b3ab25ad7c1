"""tools/ppo_pool.py, PPO's matrix pool in scripts/gpu-learn.sh, over SFT data made here: which
samples qualify, and how the strata spread the pool."""

from __future__ import annotations

import collections
import gzip
import json
import os
import subprocess
import sys

TOOL = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "ppo_pool.py")


def sample(name, family, order, template, rows, nnz, label="heuristic", split="train"):
    return {"name": name, "family": family, "generator": {"family": family, "order": order},
            "shape": [rows, rows], "nnz": nnz, "label": label, "split": split,
            "code": f"FORMAT: CSR\n// expert: {template} spmv CSR block=128\n"}


def write_data(path, samples):
    with gzip.open(path, "wt") as f:
        for s in samples:
            f.write(json.dumps(s) + "\n")


def pool(tmp_path, samples, *args):
    data, out = tmp_path / "sft.jsonl.gz", tmp_path / "pool.jsonl"
    write_data(data, samples)
    run = subprocess.run([sys.executable, TOOL, str(data), str(out), *args],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    picked = [json.loads(line) for line in out.read_text().splitlines()]
    assert run.stdout.strip() == str(len(picked))
    return picked


def test_only_large_training_samples_of_the_chosen_label_qualify(tmp_path):
    samples = [sample("big", "knn", "random", "csr_vector", 100000, 2000000),
               sample("small", "knn", "random", "csr_vector", 1000, 20000),
               sample("val", "knn", "random", "csr_vector", 100000, 2000000, split="val"),
               sample("timed", "knn", "random", "csr_vector", 100000, 2000000, label="autotune")]
    picked = pool(tmp_path, samples, "--count", "9", "--min-nnz", "1000000")
    assert [s["name"] for s in picked] == ["big"]
    timed = pool(tmp_path, samples, "--count", "9", "--min-nnz", "1000000", "--from", "timed")
    assert [s["name"] for s in timed] == ["timed"]
    # A sample stored as coordinates (no "nnz"): its nonzeros are its coordinates.
    listed = sample("listed", "knn", "random", "csr_vector", 100, 0)
    del listed["nnz"]
    listed["rows"], listed["cols"] = [0, 1, 2], [1, 2, 0]
    picked = pool(tmp_path, samples + [listed], "--count", "9", "--min-nnz", "3")
    assert [s["name"] for s in picked] == ["big", "small", "listed"]
    picked = pool(tmp_path, samples + [listed], "--count", "9", "--min-nnz", "4")
    assert [s["name"] for s in picked] == ["big", "small"]


def test_template_rows_gives_long_rowed_rcsr_matrices_their_own_share(tmp_path):
    # One family and order, so family_order has one stratum and takes the file's first four: the
    # short-rowed RCSR matrices that come first. template_rows splits RCSR by row length.
    samples = ([sample(f"rcsr-short-{i}", "mesh2d", "random", "rcsr_vector", 300000, 2100000)
                for i in range(6)] +
               [sample(f"rcsr-long-{i}", "mesh2d", "random", "rcsr_vector", 100000, 1600000)
                for i in range(3)] +
               [sample(f"vector-mid-{i}", "mesh2d", "random", "csr_vector", 200000, 1400000)
                for i in range(3)])
    by_family = pool(tmp_path, samples, "--count", "4", "--min-nnz", "1000000")
    assert [s["name"] for s in by_family] == [f"rcsr-short-{i}" for i in range(4)]
    by_template = pool(tmp_path, samples, "--count", "6", "--min-nnz", "1000000",
                       "--strata", "template_rows")
    kinds = collections.Counter(s["name"].rsplit("-", 1)[0] for s in by_template)
    assert kinds == {"rcsr-short": 2, "rcsr-long": 2, "vector-mid": 2}


def test_family_order_spreads_over_families_and_orders(tmp_path):
    samples = ([sample(f"knn-{i}", "knn", "random", "ell", 100000, 1200000) for i in range(5)] +
               [sample(f"fem-{i}", "fem", "rcm", "bsr", 100000, 3000000) for i in range(5)] +
               [sample(f"fem-nat-{i}", "fem", "natural", "bsr", 100000, 3000000) for i in range(5)])
    picked = pool(tmp_path, samples, "--count", "6", "--min-nnz", "1000000")
    assert collections.Counter((s["family"], s["generator"]["order"]) for s in picked) == {
        ("knn", "random"): 2, ("fem", "rcm"): 2, ("fem", "natural"): 2}


def test_bad_input_is_one_line(tmp_path):
    bad = tmp_path / "bad.jsonl.gz"
    bad.write_bytes(b"not gzip")
    args = [sys.executable, TOOL, str(bad), str(tmp_path / "o.jsonl"), "--count", "4"]
    run = subprocess.run(args, capture_output=True, text=True)
    assert run.returncode == 2
    assert run.stderr.strip().count("\n") == 0 and "cannot read" in run.stderr
    assert not (tmp_path / "o.jsonl").exists()
    run = subprocess.run(args + ["--strata", "families"], capture_output=True, text=True)
    assert run.returncode == 2 and "--strata" in run.stderr
