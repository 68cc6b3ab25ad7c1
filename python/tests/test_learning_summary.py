"""tools/learning_summary.py over a gpu-learn.sh output folder made here: the per-seed table, the
mean and range over seeds, PPO's gain against the range, and the per-group geomeans."""

from __future__ import annotations

import gzip
import json
import math
import os
import subprocess
import sys

import pytest

TOOL = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "learning_summary.py")


def write_eval(folder, speedups, heuristic, tuned, programs=None):
    os.makedirs(folder)
    matrices = [{"matrix": name, "speedup_greedy": s, "speedup_heuristic": heuristic[name],
                 "speedup_tuned": tuned[name]} for name, s in speedups.items()]
    for m in matrices:
        if programs is not None:
            m["greedy_program"] = programs[m["matrix"]]
    def geomean(values):
        return math.exp(sum(math.log(v or 1.0) for v in values) / len(values))

    summary = {"matrices": len(matrices), "greedy_compile_rate": 1.0, "greedy_correct_rate": 1.0,
               "geomean_speedup_greedy": geomean(speedups.values()),
               "geomean_speedup_best_of_k": None,
               "geomean_speedup_heuristic": geomean([heuristic[n] for n in speedups]),
               "geomean_speedup_tuned": geomean([tuned[n] for n in speedups]), "correct_rate": 1.0}
    with open(os.path.join(folder, "evaluate_policy.json"), "w") as f:
        json.dump({"summary": summary, "matrices": matrices}, f)


def test_each_policy_is_grouped_beside_its_own_evaluations_columns(tmp_path):
    """Every evaluation times the heuristic's and the tuned best's programs again: the PPO group's
    columns come from the PPO evaluation, not from whichever evaluation was read last."""
    names = ["road-rcm-0.mtx", "road-rcm-1.mtx"]
    write_eval(str(tmp_path / "seed-1" / "eval-sft"), dict.fromkeys(names, 1.25),
               dict.fromkeys(names, 1.3), dict.fromkeys(names, 1.5))
    write_eval(str(tmp_path / "seed-1" / "eval-ppo"), dict.fromkeys(names, 1.2),
               dict.fromkeys(names, 1.2), dict.fromkeys(names, 1.4))
    out = subprocess.run([sys.executable, TOOL, str(tmp_path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    road = json.loads((tmp_path / "learning.json").read_text())["groups"]["road-rcm"]
    assert [round(road[c], 6) for c in ("sft", "heuristic", "tuned", "ppo", "ppo_heuristic",
                                        "ppo_tuned")] == [1.25, 1.3, 1.5, 1.2, 1.2, 1.4]
    assert ("| road-rcm | 1.250x | 1.300x | 1.500x | 1.200x | 1.200x | 1.400x |"
            in (tmp_path / "learning.md").read_text())


def test_groups_seeds_and_ppo_gain(tmp_path):
    heuristic = {"road-rcm-0.mtx": 1.3, "road-rcm-1.mtx": 1.2, "mesh3d-natural-0.mtx": 1.1}
    tuned = {"road-rcm-0.mtx": 1.4, "road-rcm-1.mtx": 1.4, "mesh3d-natural-0.mtx": 1.2}
    runs = {1: ({"road-rcm-0.mtx": 0.8, "road-rcm-1.mtx": None, "mesh3d-natural-0.mtx": 1.0},
                {"road-rcm-0.mtx": 1.2, "road-rcm-1.mtx": 1.25, "mesh3d-natural-0.mtx": 1.0}),
            2: ({"road-rcm-0.mtx": 1.0, "road-rcm-1.mtx": 1.0, "mesh3d-natural-0.mtx": 1.1},
                {"road-rcm-0.mtx": 1.3, "road-rcm-1.mtx": 1.3, "mesh3d-natural-0.mtx": 1.1})}
    for seed, (sft, ppo) in runs.items():
        write_eval(str(tmp_path / f"seed-{seed}" / "eval-sft"), sft, heuristic, tuned)
        write_eval(str(tmp_path / f"seed-{seed}" / "eval-ppo"), ppo, heuristic, tuned)
    out = subprocess.run([sys.executable, TOOL, str(tmp_path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    doc = json.loads((tmp_path / "learning.json").read_text())
    road = doc["groups"]["road-rcm"]
    # SFT: 0.8, 1.0 (no program counts 1.0), 1.0, 1.0 over both seeds and both sizes.
    assert math.isclose(road["sft"], 0.8 ** 0.25)
    assert math.isclose(road["ppo"], (1.2 * 1.25 * 1.3 * 1.3) ** 0.25)
    assert math.isclose(road["heuristic"], (1.3 * 1.2) ** 0.5)
    assert math.isclose(road["tuned"], 1.4)
    assert math.isclose(doc["groups"]["mesh3d-natural"]["sft"], 1.1 ** 0.5)
    assert "| road-rcm | 0.946x |" in (tmp_path / "learning.md").read_text()
    # PPO's mean greedy geomean minus SFT's, against the larger range over the seeds.
    gain = doc["checks"]["ppo_gain_greedy"]
    sft = [doc["seeds"][s]["sft"]["geomean_speedup_greedy"] for s in ("1", "2")]
    ppo = [doc["seeds"][s]["ppo"]["geomean_speedup_greedy"] for s in ("1", "2")]
    assert math.isclose(gain, sum(ppo) / 2 - sum(sft) / 2)
    spread = max(max(sft) - min(sft), max(ppo) - min(ppo))
    assert doc["checks"]["ppo_above_sft_beyond_spread"] == (gain > spread)
    # The room left: the tuned best's geomean (1.4, 1.4, 1.2 on every seed) less SFT's greedy mean.
    headroom = (1.4 * 1.4 * 1.2) ** (1 / 3) - sum(sft) / 2
    assert math.isclose(doc["checks"]["ppo_headroom_greedy"], headroom)
    assert doc["checks"]["ppo_headroom_beyond_spread"] == (headroom > spread)
    # Wrong picks, each against its own evaluation's heuristic: SFT 0.8/1.3, none (0), 1.0/1.2 and
    # 1.0/1.3 are below 0.9; 1.0/1.1 is not. PPO's lowest is 1.0/1.1.
    checks = doc["checks"]
    assert checks["sft_greedy_below_0.9_heuristic"] == 4
    assert checks["sft_greedy_min_over_heuristic"] == 0.0
    assert checks["ppo_greedy_below_0.9_heuristic"] == 0
    assert math.isclose(checks["ppo_greedy_min_over_heuristic"], 1.0 / 1.1)
    assert checks["sft_greedy_evaluated"] == checks["ppo_greedy_evaluated"] == 6
    assert doc["seeds"]["1"]["sft"]["below_heuristic"] == {"below": 2, "min": 0.0, "matrices": 3}


def test_add_merges_seeds_of_earlier_runs(tmp_path):
    """A recipe run one seed per device call: seed 1's learning.json (no per-seed groups, as the
    tool wrote before) joins seed 2's folder; groups and the spread cover both seeds."""
    heuristic = {"road-rcm-0.mtx": 1.3}
    tuned = {"road-rcm-0.mtx": 1.4}
    first = tmp_path / "run1"
    write_eval(str(first / "seed-1" / "eval-sft"), {"road-rcm-0.mtx": 1.0}, heuristic, tuned)
    write_eval(str(first / "seed-1" / "eval-ppo"), {"road-rcm-0.mtx": 1.21}, heuristic, tuned)
    assert subprocess.run([sys.executable, TOOL, str(first)], capture_output=True).returncode == 0
    old = json.loads((first / "learning.json").read_text())
    for entry in old["seeds"].values():
        del entry["groups"]
    (first / "learning.json").write_text(json.dumps(old))
    second = tmp_path / "run2"
    write_eval(str(second / "seed-2" / "eval-sft"), {"road-rcm-0.mtx": 1.1}, heuristic, tuned)
    write_eval(str(second / "seed-2" / "eval-ppo"), {"road-rcm-0.mtx": 1.44}, heuristic, tuned)
    out = subprocess.run([sys.executable, TOOL, str(second), "--add", str(first / "learning.json")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    doc = json.loads((second / "learning.json").read_text())
    assert sorted(doc["seeds"]) == ["1", "2"]
    assert math.isclose(doc["groups"]["road-rcm"]["ppo"], (1.21 * 1.44) ** 0.5)
    assert math.isclose(doc["groups"]["road-rcm"]["sft"], 1.1 ** 0.5)
    assert math.isclose(doc["checks"]["ppo_gain_greedy"], (1.21 + 1.44) / 2 - (1.0 + 1.1) / 2)
    assert math.isclose(doc["checks"]["seed_range_greedy"], 1.44 - 1.21)
    bad = subprocess.run([sys.executable, TOOL, str(second), "--add"], capture_output=True, text=True)
    assert bad.returncode != 0 and "--add needs" in bad.stderr


def test_paired_gain_counts_only_changed_programs(tmp_path):
    """The same greedy program re-timed is noise: it counts 1.0; a changed one counts PPO's speed-up
    over SFT's, a missing one 1.0 (as in the geomeans)."""
    names = ["a-natural-0.mtx", "a-natural-1.mtx", "b-rcm-0.mtx"]
    heuristic = dict.fromkeys(names, 1.2)
    tuned = dict.fromkeys(names, 1.3)
    sft_programs = {"a-natural-0.mtx": "csr_scalar", "a-natural-1.mtx": "dia", "b-rcm-0.mtx": "ell"}
    ppo_programs = {"a-natural-0.mtx": "csr_vector", "a-natural-1.mtx": "dia", "b-rcm-0.mtx": "coo"}
    write_eval(str(tmp_path / "seed-1" / "eval-sft"),
               {"a-natural-0.mtx": 1.0, "a-natural-1.mtx": 1.5, "b-rcm-0.mtx": 1.1},
               heuristic, tuned, sft_programs)
    write_eval(str(tmp_path / "seed-1" / "eval-ppo"),
               {"a-natural-0.mtx": 1.21, "a-natural-1.mtx": 1.35, "b-rcm-0.mtx": None},
               heuristic, tuned, ppo_programs)
    out = subprocess.run([sys.executable, TOOL, str(tmp_path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    doc = json.loads((tmp_path / "learning.json").read_text())
    seed = doc["seeds"]["1"]
    assert seed["ppo_programs_changed"] == 2
    # 1.21 / 1.0 and 1.0 / 1.1 change; dia 1.5 -> 1.35 is the same program: 1.
    assert math.isclose(seed["ppo_over_sft_paired"], (1.21 / 1.1) ** (1 / 3))
    assert math.isclose(doc["checks"]["ppo_over_sft_paired_mean"], (1.21 / 1.1) ** (1 / 3))
    assert doc["checks"]["ppo_programs_changed"] == 2
    assert "ppo_over_sft_paired_mean" in (tmp_path / "learning.md").read_text()
    # Without the programs (older evaluations) there is no paired figure, and no error.
    for pol in ("sft", "ppo"):
        path = tmp_path / "seed-1" / f"eval-{pol}" / "evaluate_policy.json"
        doc = json.loads(path.read_text())
        for m in doc["matrices"]:
            del m["greedy_program"]
        path.write_text(json.dumps(doc))
    out = subprocess.run([sys.executable, TOOL, str(tmp_path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "ppo_over_sft_paired" not in json.loads((tmp_path / "learning.json").read_text())["seeds"]["1"]


def test_changed_programs_are_listed_by_their_header_and_kind(tmp_path):
    """Each program PPO changed, named by its template and FORMAT / LAUNCH lines (not its expert
    comment's values, which a policy may keep above another launch), each side against its own
    evaluation's heuristic, and classed: SFT 0.8 -> PPO 0.99 fixes a wrong pick, 1.0 -> 0.85 breaks
    one, 1.0 -> 0.95 loses, 1.0 -> 1.05 gains, 1.0 -> 1.01 is even; an unchanged one is not listed."""
    def program(lanes, comment_lanes=None):
        return (f"FORMAT: CSR\nLAUNCH: block=128 rows_per_block={128 // lanes}\n"
                f"// expert: csr_vector spmv CSR block=128 lanes={comment_lanes or lanes}\nbody")
    before = {"fix-0.mtx": (0.8, program(2)), "break-0.mtx": (1.0, program(4)),
              "loss-0.mtx": (1.0, program(4)), "gain-0.mtx": (1.0, program(4)),
              "even-0.mtx": (1.0, program(4)), "same-0.mtx": (1.0, program(8))}
    after = {"fix-0.mtx": (0.99, program(4)), "break-0.mtx": (0.85, program(2)),
             "loss-0.mtx": (0.95, program(8, comment_lanes=4)), "gain-0.mtx": (1.05, program(8)),
             "even-0.mtx": (1.01, program(8)), "same-0.mtx": (0.9, program(8))}
    heuristic = dict.fromkeys(before, 1.0)
    write_eval(str(tmp_path / "seed-1" / "eval-sft"), {n: v[0] for n, v in before.items()},
               heuristic, heuristic, {n: v[1] for n, v in before.items()})
    write_eval(str(tmp_path / "seed-1" / "eval-ppo"), {n: v[0] for n, v in after.items()},
               {n: 1.0 for n in after}, heuristic, {n: v[1] for n, v in after.items()})
    out = subprocess.run([sys.executable, TOOL, str(tmp_path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    doc = json.loads((tmp_path / "learning.json").read_text())
    changes = {c["matrix"]: c for c in doc["seeds"]["1"]["ppo_changes"]}
    assert {n: c["kind"] for n, c in changes.items()} == {
        "fix-0.mtx": "fix", "break-0.mtx": "break", "loss-0.mtx": "loss", "gain-0.mtx": "gain",
        "even-0.mtx": "even"}
    # The launch sets lanes = 128 / rows_per_block = 8, whatever the comment says.
    assert changes["loss-0.mtx"]["ppo_program"] == "csr_vector; CSR; block=128 rows_per_block=16"
    assert changes["loss-0.mtx"]["sft_program"] == "csr_vector; CSR; block=128 rows_per_block=32"
    assert math.isclose(changes["fix-0.mtx"]["sft_over_heuristic"], 0.8)
    checks = doc["checks"]
    assert [checks[f"ppo_changes_{k}"] for k in ("fix", "break", "gain", "loss", "even")] == [1] * 5
    assert ("| 1 | loss-0.mtx | csr_vector; CSR; block=128 rows_per_block=32 | 1.000 | csr_vector; "
            "CSR; block=128 rows_per_block=16 | 0.950 | loss |") in (tmp_path / "learning.md").read_text()


def test_reward_rise_compares_the_first_and_last_quarter_of_the_steps(tmp_path):
    names = ["a-natural-0.mtx"]
    for seed, rewards in ((1, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]), (2, [0.5, 0.4, None])):
        for pol in ("sft", "ppo"):
            write_eval(str(tmp_path / f"seed-{seed}" / f"eval-{pol}"), {names[0]: 1.0},
                       {names[0]: 1.1}, {names[0]: 1.2})
        with open(tmp_path / f"seed-{seed}" / "ppo-metrics.jsonl", "w") as f:
            for step, r in enumerate(rewards):
                f.write(json.dumps({"step": step + 1, "reward_mean": r}) + "\n")
    out = subprocess.run([sys.executable, TOOL, str(tmp_path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    doc = json.loads((tmp_path / "learning.json").read_text())
    # 9 steps: quarters of 2 steps, (0.1 + 0.2) / 2 and (0.8 + 0.9) / 2.
    assert math.isclose(doc["seeds"]["1"]["ppo_reward_first_quarter"], 0.15)
    assert math.isclose(doc["seeds"]["1"]["ppo_reward_last_quarter"], 0.85)
    # Seed 2 has 2 steps with a reward: no quarter, no rise (and no error).
    assert "ppo_reward_first_quarter" not in doc["seeds"]["2"]
    assert math.isclose(doc["checks"]["ppo_reward_rise_mean"], 0.7)
    assert doc["checks"]["ppo_reward_rising_seeds"] == 1
    assert doc["checks"]["ppo_reward_seeds"] == 1


def test_tied_groups_are_counted_over_every_step_of_every_seed(tmp_path):
    """Seed 1: 2 of 12 and 6 of 12 groups tied; seed 2: none of 12; seed 3 logs no groups (an
    older run) and is left out: 8 of 36 tied, not the mean of the per-seed shares (1/6)."""
    steps = {1: [(12, 2), (12, 6)], 2: [(12, 0)], 3: [(None, None)]}
    for seed, counts in steps.items():
        for pol in ("sft", "ppo"):
            write_eval(str(tmp_path / f"seed-{seed}" / f"eval-{pol}"), {"a-natural-0.mtx": 1.0},
                       {"a-natural-0.mtx": 1.1}, {"a-natural-0.mtx": 1.2})
        with open(tmp_path / f"seed-{seed}" / "ppo-metrics.jsonl", "w") as f:
            for step, (groups, tied) in enumerate(counts):
                line = {"step": step + 1, "reward_mean": 1.0}
                if groups is not None:
                    line.update(groups=groups, groups_tied=tied)
                f.write(json.dumps(line) + "\n")
    out = subprocess.run([sys.executable, TOOL, str(tmp_path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    doc = json.loads((tmp_path / "learning.json").read_text())
    assert (doc["seeds"]["1"]["ppo_groups"], doc["seeds"]["1"]["ppo_groups_tied"]) == (24, 8)
    assert "ppo_groups" not in doc["seeds"]["3"]
    assert math.isclose(doc["checks"]["ppo_groups_tied"], 8 / 36)


def summarise_rollouts(tmp_path, rollouts, packed=False):
    """The tool over one seed whose PPO rollout log holds `rollouts` (and a one-matrix SFT
    evaluation); its learning.json. `packed`: the log gzip-compressed, as gpu-learn.sh writes it."""
    seed = tmp_path / "seed-1"
    seed.mkdir()
    with (gzip.open(seed / "ppo-rollouts.jsonl.gz", "wt") if packed
          else open(seed / "ppo-rollouts.jsonl", "w")) as f:
        for line in rollouts:
            f.write(json.dumps(line) + "\n")
    write_eval(str(seed / "eval-sft"), {"road-rcm-0.mtx": 1.0}, {"road-rcm-0.mtx": 1.1},
               {"road-rcm-0.mtx": 1.2})
    out = subprocess.run([sys.executable, TOOL, str(tmp_path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads((tmp_path / "learning.json").read_text())


@pytest.mark.parametrize("packed", [False, True])
def test_rollout_log_counts_what_ppo_could_learn_from(tmp_path, packed):
    """seed-1/ppo-rollouts.jsonl over 4 steps of one matrix: P (1.0x) and Q (1.2x, the fastest
    seen). Step 1: P P P Q (two correct programs, Q faster than the most sampled); step 2: P P P
    and a wrong one (one timed program); step 3: P Q Q Q (Q is the most sampled: nothing faster);
    step 4: Q Q Q Q. The share of rollouts that are the matrix's fastest program: 1/4 in the first
    quarter (step 1), 4/4 in the last (step 4)."""
    def row(step, sha, speedup, correct=True):
        return {"step": step, "time": 0, "task": "a", "group": 0, "program": sha,
                "program_sha256": sha, "correct": correct, "speedup": speedup}
    steps = {1: "PPPQ", 2: "PPPW", 3: "PQQQ", 4: "QQQQ"}
    speed = {"P": 1.0, "Q": 1.2}
    doc = summarise_rollouts(tmp_path, [row(step, sha, None, False) if sha == "W" else
                                        row(step, sha, speed[sha])
                                        for step, programs in steps.items() for sha in programs],
                             packed)
    x = doc["seeds"]["1"]["ppo_rollouts"]
    assert (x["rollouts"], x["groups"], x["groups_explored"], x["groups_with_faster"]) == (16, 4, 2, 1)
    assert x["groups_by_family"] == {"other": [4, 1]}
    assert math.isclose(x["best_share_first_quarter"], 0.25)
    assert math.isclose(x["best_share_last_quarter"], 1.0)
    assert math.isclose(doc["checks"]["ppo_groups_explored"], 0.5)
    assert math.isclose(doc["checks"]["ppo_groups_with_faster"], 0.25)
    assert math.isclose(doc["checks"]["ppo_best_share_rise_mean"], 0.75)


def test_revisited_matrices_compare_their_first_and_last_draw(tmp_path):
    """Matrix a drawn at steps 1, 2 and 4 (mean rewards 0.0, 9.0 and 1.0), matrix b at step 3 only,
    matrix c at steps 3 and 4 (1.0, then 0.5): over a and c the first draws average 0.5 and the
    last 0.75; b, drawn once, is left out, and a's middle draw does not count there. By visit
    (the learning curve), the second visit is a's 9.0 beside c's 0.5, and a's third is not shown:
    c has no third."""
    rewards = {("a", 1): [-1.0, 1.0], ("a", 2): [9.0, 9.0], ("a", 4): [1.0, 1.0],
               ("b", 3): [5.0, 5.0], ("c", 3): [1.0, 1.0], ("c", 4): [0.0, 1.0]}
    doc = summarise_rollouts(tmp_path, [
        {"step": step, "task": task, "group": 0, "program_sha256": str(i), "correct": r > 0,
         "speedup": None, "reward": r}
        for (task, step), values in rewards.items() for i, r in enumerate(values)])
    x = doc["seeds"]["1"]["ppo_rollouts"]
    assert x["revisited_matrices"] == 2
    assert math.isclose(x["revisited_reward_first_draw"], 0.5)
    assert math.isclose(x["revisited_reward_last_draw"], 0.75)
    # By visit, up to c's two: a's 0.0 and 9.0, c's 1.0 and 0.5.
    assert [round(v, 6) for v in x["revisited_reward_by_visit"]] == [0.5, 4.75]
    assert math.isclose(doc["checks"]["ppo_revisited_reward_rise_mean"], 0.25)
    assert doc["checks"]["ppo_revisited_reward_rising_seeds"] == 1


def test_groups_with_a_faster_program_are_counted_by_family(tmp_path):
    """Two knn groups (one offers a program 1.2x faster than its most sampled, one does not) and a
    fem group whose samples are all one program: by family, knn 2 groups / 1 faster, fem 1 / 0; the
    markdown lists them, the family with more first."""
    def row(step, task, sha, speedup):
        return {"step": step, "time": 0, "task": task, "group": 0, "program": sha,
                "program_sha256": sha, "correct": True, "speedup": speedup}
    knn, fem = "gen-00007-knn-200000x200000", "gen-00012-fem-90000x90000"
    rows = ([row(1, knn, "P", 1.0), row(1, knn, "P", 1.0), row(1, knn, "Q", 1.2)] +
            [row(2, knn, "P", 1.0), row(2, knn, "Q", 1.01), row(2, knn, "P", 1.0)] +
            [row(3, fem, "B", 1.5), row(3, fem, "B", 1.5)])
    doc = summarise_rollouts(tmp_path, rows)
    assert doc["seeds"]["1"]["ppo_rollouts"]["groups_by_family"] == {"fem": [1, 0], "knn": [2, 1]}
    md = (tmp_path / "learning.md").read_text()
    assert md.index("| knn | 2 | 1 (50%) |") < md.index("| fem | 1 | 0 (0%) |")
