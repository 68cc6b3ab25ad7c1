"""The seed's commands through `python -m` on tiny data made here: train_sft from a folder of .mtx
files and from an SFT JSONL, then train_minimal (PPO) from the first run's model. Each runs the
C++ trainer inside the Python process (sparserl._cli).

The seed's flags are given as the seed writes them; TINY (a 1-layer model) and the PPO step's
--batch-size / --max-new-tokens come after them only to keep this test at seconds on 2 cores
(the defaults take ~100 s here; the trainers themselves are tested by tests/train and
tests/cli/test_train_cli.cpp)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import sparserl


TINY = ["--init-hidden", "32", "--init-layers", "1", "--init-intermediate", "64"]


def run_module(cwd: Path, module: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, capture_output=True,
                          text=True, timeout=900)


def losses(metrics: Path) -> list[float]:
    lines = [json.loads(line) for line in metrics.read_text().splitlines() if line.strip()]
    return [r["loss"] for r in lines if "loss" in r]


def test_the_seed_commands(tmp_path):
    # dataset/: three small .mtx files of different families (labelled by the heuristic).
    first = tmp_path / "first"
    (first / "dataset").mkdir(parents=True)
    for i, (family, rows) in enumerate([("stencil2d", 144), ("banded", 100), ("random", 120)]):
        sparserl.write_matrix_market(sparserl.generate(family, rows, seed=i + 1),
                                     first / "dataset" / f"{family}.mtx")
    r = run_module(first, "sparserl.train_sft", "--dataset-dir", "dataset", "--max-nnz", "128",
                   "--steps", "2", *TINY)
    assert r.returncode == 0, r.stderr
    assert "train-sft: 2 steps" in r.stdout
    assert len(losses(first / "runs/sft/metrics.jsonl")) == 2
    model = first / "runs/sft/final"
    assert (model / "config.json").exists() and (model / "projector.safetensors").exists()

    # sft_samples.jsonl from the dataset builder (python -m sparserl: the CLI in-process).
    second = tmp_path / "second"
    second.mkdir()
    r = run_module(second, "sparserl", "dataset", "build", "--generate", "4", "--device", "cpu",
                   "--no-progress", "-o", "sft_samples.jsonl")
    assert r.returncode == 0, r.stderr
    r = run_module(second, "sparserl.train_sft", "--data", "sft_samples.jsonl", "--steps", "2",
                   *TINY)
    assert r.returncode == 0, r.stderr
    assert len(losses(second / "runs/sft/metrics.jsonl")) == 2

    # PPO from the first run's model, M = runs/sft/final, as the seed writes it.
    m = str(model)
    r = run_module(first, "sparserl.train_minimal", "--steps", "1", "--max-nnz", "128",
                   "--model-path", m, "--tokenizer-path", m, "--batch-size", "2",
                   "--max-new-tokens", "48")
    assert r.returncode == 0, r.stderr
    assert "train-ppo: 1 steps" in r.stdout
    metrics = (first / "runs/ppo/metrics.jsonl").read_text()
    assert "reward_mean" in metrics
    assert (first / "runs/ppo/final/value_head.safetensors").exists()


def test_a_bad_flag_fails_with_the_cli_status(tmp_path):
    r = run_module(tmp_path, "sparserl.train_minimal", "--steps", "1")
    assert r.returncode == 1
    assert "--model-path is required" in r.stderr
