#!/usr/bin/env python3
"""Summarises scripts/gpu-learn.sh over its seeds: for the SFT and the PPO policy of every seed,
the greedy compile and correct rates and geomean speed-ups (greedy, best of K) over cuSPARSE on the
held-out matrices, beside the heuristic's and the tuned best's on the same matrices; the mean and
the spread (max - min, and the sample standard deviation) over the seeds; PPO's gain over SFT per
seed, also paired (only the matrices whose greedy program PPO changed, since re-timing one program
moves its speed-up by 1-2%); the PPO reward per step and its rise (the mean over the last quarter
of the steps minus the first quarter's: with a pool of PPO_MATRICES drawn PPO_BATCH a step, a
quarter of 24 steps over 72 matrices, 12 a step, is one pass, so both quarters cover the same
matrices); per group of held-out matrices (the name without its trailing "-N.mtx", e.g. road-rcm:
family and node order), the geomean over seeds and sizes of each policy's greedy speed-up beside
the heuristic's and the tuned best's, where the policy wins and loses; how many greedy programs are
below 0.9 of the heuristic's (wrong picks; the geomean hides them) and the lowest; every greedy
program PPO changed, by its FORMAT and LAUNCH lines, as a fix, break, gain, loss or even; from
PPO's metrics, the share of groups (a matrix's samples in one step) whose samples all scored alike
(no signal; left out of the update); from PPO's rollout log (seed-N/ppo-rollouts.jsonl.gz, one
line per sampled program), what PPO had to learn from: how many groups held two or more different
correct programs, how many held one faster than the group's most sampled program by more than the
timing noise (3%) (also by the matrix's generator family: where PPO had something to learn), and
the share of rollouts that are their matrix's fastest program seen in the
run, in the first and the last quarter of the steps (rising: the policy moved towards faster
programs); and the reward on the same matrices: each matrix drawn in two or more steps, the mean
reward of its samples at its first draw against its last, and at each visit (the k-th draw of
every such matrix, plotted as the learning curve: the step curve mixes the policy's change with
which matrices a step drew; this compares like with like).
Writes OUT/learning.json, OUT/learning.md and (with matplotlib) OUT/learning.png.

usage: python3 tools/learning_summary.py OUT [--add LEARNING_JSON ...]
  OUT: gpu-learn.sh's output folder, seed-N/ in it. --add: the learning.json of earlier runs of the
  same recipe (e.g. one seed per device call, where a call's 10 minutes hold one seed): their seeds
  join OUT's (a seed OUT has itself is kept from OUT).
"""
import argparse
import gzip
import json
import math
import os
import re
import statistics
import sys

POLICIES = ("sft", "ppo")
COLUMNS = (("greedy_compile_rate", "greedy compiled"), ("greedy_correct_rate", "greedy correct"),
           ("geomean_speedup_greedy", "greedy"), ("geomean_speedup_best_of_k", "best of K"),
           ("geomean_speedup_heuristic", "heuristic"), ("geomean_speedup_tuned", "tuned best"))


def read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read_metrics(path):
    """The JSON lines of `path` (gzip-compressed when it ends in .gz), [] when there is none."""
    rows = []
    try:
        with (gzip.open(path, "rt", encoding="utf-8") if path.endswith(".gz")
              else open(path, encoding="utf-8")) as f:
            for line in f:
                if line.strip():
                    rows.append(json.loads(line))
    except OSError:
        pass
    return rows


def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return {"n": 0, "mean": None, "min": None, "max": None, "range": None, "std": None}
    return {"n": len(values), "mean": statistics.fmean(values), "min": min(values),
            "max": max(values), "range": max(values) - min(values),
            "std": statistics.stdev(values) if len(values) > 1 else 0.0}


def seeds_in(out):
    found = []
    for name in os.listdir(out):
        if name.startswith("seed-") and name[5:].isdigit():
            found.append(int(name[5:]))
    return sorted(found)


# Per held-out group: each policy's greedy speed-up and the columns of its own evaluation.
GROUP_COLUMNS = ("sft", "heuristic", "tuned", "ppo", "ppo_heuristic", "ppo_tuned")


def group_of(matrix):
    """road-rcm-2.mtx -> road-rcm: the held-out matrices of one family and node order."""
    stem = matrix[:-4] if matrix.endswith(".mtx") else matrix
    head, _, tail = stem.rpartition("-")
    return head if head and tail.isdigit() else stem


def geomean(values):
    return math.exp(statistics.fmean(math.log(v) for v in values)) if values else None


def seed_groups(evaluations):
    """One seed's groups (evaluations: policy -> its evaluate_policy.json): each policy's greedy
    speed-up (1.0 where no correct program, as in the evaluation's geomean) beside the heuristic's
    and the tuned best's timed in that same evaluation (every evaluation times them again, and two
    evaluations of one program differ by 1-2%: a policy is compared with its own run's columns),
    geomean over the group's sizes. "heuristic" and "tuned" are the SFT evaluation's,
    "ppo_heuristic" and "ppo_tuned" the PPO evaluation's."""
    prefix = {"sft": "", "ppo": "ppo_"}
    logs = {}
    for pol, doc in evaluations.items():
        for m in (doc or {}).get("matrices", []):
            g = logs.setdefault(group_of(m["matrix"]), {})
            g.setdefault(pol, []).append(m.get("speedup_greedy") or 1.0)
            for key, name in (("speedup_heuristic", "heuristic"), ("speedup_tuned", "tuned")):
                if m.get(key):
                    g.setdefault(prefix.get(pol, pol + "_") + name, []).append(m[key])
    return {name: {col: geomean(g.get(col, [])) for col in GROUP_COLUMNS}
            for name, g in sorted(logs.items())}


def program_pairs(evaluations):
    """Each held-out matrix's (SFT, PPO) entries, matched by content id, else name; None when an
    evaluation is missing or does not hold the greedy programs (older evaluations)."""
    sft, ppo = evaluations.get("sft"), evaluations.get("ppo")
    if not sft or not ppo:
        return None
    def key(m):
        return m.get("matrix_id") or m["matrix"]
    before = {key(m): m for m in sft.get("matrices", [])}
    pairs = []
    for m in ppo.get("matrices", []):
        b = before.get(key(m))
        if b is None or "greedy_program" not in m or "greedy_program" not in b:
            return None
        pairs.append((b, m))
    return pairs


def paired_ppo_gain(evaluations):
    """PPO against SFT on the programs it changed: per matrix, PPO's greedy speed-up over SFT's
    where PPO's greedy program differs from SFT's, 1 where it is the same program (re-timing the
    same program measures only noise: 1-2% per matrix between two evaluations of one call),
    geomean over the matrices. Returns (ratio, changed, matrices) or None when the evaluations do
    not hold the programs."""
    pairs = program_pairs(evaluations)
    if not pairs:
        return None
    logs, changed = [], 0
    for b, m in pairs:
        if m["greedy_program"] == b["greedy_program"]:
            logs.append(0.0)
            continue
        changed += 1
        logs.append(math.log(m.get("speedup_greedy") or 1.0) - math.log(b.get("speedup_greedy") or 1.0))
    return math.exp(statistics.fmean(logs)), changed, len(logs)


SHORTFALL = 0.9  # a greedy program this far below the heuristic's is a wrong pick, not noise


def over_heuristic(m):
    """A matrix's greedy speed-up over the heuristic's of the same evaluation (0: no program)."""
    return (m.get("speedup_greedy") or 0.0) / m["speedup_heuristic"]


def shortfalls(doc):
    """One evaluation's greedy programs against the heuristic's timed in that run: how many of the
    matrices are below SHORTFALL of it (no correct program counts as 0) and the lowest ratio. The
    geomean hides what RL changes most: PPO removes SFT's few bad picks (road in random order at
    0.6-0.8 of the heuristic) and loses 2-10% on a few close calls."""
    ratios = [over_heuristic(m) for m in (doc or {}).get("matrices", []) if m.get("speedup_heuristic")]
    if not ratios:
        return None
    return {"below": sum(r < SHORTFALL for r in ratios), "min": min(ratios), "matrices": len(ratios)}


CHANGE_NOISE = 0.03  # two timings of one program in one evaluation differ by 1-2%


def program_header(text):
    """What a program is: its template's name (from the "// expert:" line, which a policy may keep
    above another launch, so only the name) and its FORMAT and LAUNCH lines, which set it."""
    name, header = "", []
    for line in (text or "").splitlines():
        if line.startswith("// expert: ") and not name:
            name = line[len("// expert: "):].split(" ")[0]
        elif line.startswith("FORMAT:"):
            header.append(line[len("FORMAT: "):])
        elif line.startswith("LAUNCH"):
            header.append(line[len("LAUNCH"):].lstrip(" :"))
    return "; ".join(([name] if name else []) + header) or "(no program)"


def change_kind(before, after):
    """A changed greedy program, from its speed-up over the heuristic's before (SFT) and after
    (PPO): "fix" (SFT's was a wrong pick, under SHORTFALL, and PPO's is faster), "break" (PPO's is
    a wrong pick where SFT's was not), "gain" / "loss" (beyond CHANGE_NOISE), else "even"."""
    if before < SHORTFALL and after > before * (1 + CHANGE_NOISE):
        return "fix"
    if after < SHORTFALL <= before:
        return "break"
    if after > before * (1 + CHANGE_NOISE):
        return "gain"
    if after < before * (1 - CHANGE_NOISE):
        return "loss"
    return "even"


def ppo_changes(evaluations):
    """Every held-out matrix whose greedy program PPO changed: both programs (program_header), each
    one's speed-up over the heuristic's of its own evaluation, and the change's kind (change_kind).
    The geomean nets PPO's fixes of wrong picks against its losses on close calls; this lists them.
    None when the evaluations do not hold the programs."""
    pairs = program_pairs(evaluations)
    if pairs is None:
        return None
    out = []
    for b, m in pairs:
        if m["greedy_program"] == b["greedy_program"]:
            continue
        if not m.get("speedup_heuristic") or not b.get("speedup_heuristic"):
            continue
        r_sft, r_ppo = over_heuristic(b), over_heuristic(m)
        out.append({"matrix": m["matrix"], "sft_program": program_header(b["greedy_program"]),
                    "ppo_program": program_header(m["greedy_program"]),
                    "sft_over_heuristic": r_sft, "ppo_over_heuristic": r_ppo,
                    "kind": change_kind(r_sft, r_ppo)})
    return out


def over_seed_groups(per_seed):
    """Per group, the geomean over the seeds (every seed evaluates the same matrices)."""
    names = sorted({name for e in per_seed.values() for name in e.get("groups", {})})
    return {name: {col: geomean([e["groups"][name][col] for e in per_seed.values()
                                 if e.get("groups", {}).get(name, {}).get(col)])
                   for col in GROUP_COLUMNS} for name in names}


def earlier_seeds(path):
    """The per-seed entries of an earlier learning.json; one written before entries held their own
    groups gives its run's groups to its seed when it had one seed."""
    doc = read_json(path)
    if not doc or not doc.get("seeds"):
        sys.exit(f"learning_summary: {path}: no seeds in it")
    seeds = {int(k): v for k, v in doc["seeds"].items()}
    if len(seeds) == 1 and doc.get("groups"):
        for entry in seeds.values():
            entry.setdefault("groups", doc["groups"])
    for entry in seeds.values():
        entry["from"] = path
    return seeds


# A program faster than another by less than this is within the timing noise (1-2% per matrix
# between two timings of one program on the H200).
FASTER = 1.03


def rollout_log_path(seed_dir):
    """A seed's PPO rollout log: gpu-learn.sh writes it gzip-compressed (ppo-rollouts.jsonl.gz,
    ~10x smaller: the committed runs must fit the device tool's 64 MiB working-tree limit); runs
    before 2026-12-06 wrote ppo-rollouts.jsonl."""
    packed = os.path.join(seed_dir, "ppo-rollouts.jsonl.gz")
    return packed if os.path.exists(packed) else os.path.join(seed_dir, "ppo-rollouts.jsonl")


def task_family(task):
    """The generator family in a PPO task's name (dataset build's "gen-00067-knn-227235x227235"),
    or "other"."""
    m = re.match(r"gen-\d+-([a-z0-9_]+)-", task)
    return m.group(1) if m else "other"


def rollout_exploration(path):
    """What PPO's rollouts offered it to learn from (see the module's doc), or None without a log."""
    rows = read_metrics(path)
    if not rows:
        return None
    groups, speed, draws = {}, {}, {}  # draws: task -> step -> its samples' rewards
    for r in rows:
        groups.setdefault((r["step"], r["group"]), []).append(r)
        if r.get("reward") is not None:
            draws.setdefault(r["task"], {}).setdefault(r["step"], []).append(r["reward"])
        if r.get("correct") and r.get("speedup"):
            speed.setdefault((r["task"], r["program_sha256"]), []).append(r["speedup"])
    median = {key: statistics.median(v) for key, v in speed.items()}
    best = {}  # task -> its fastest correct program (by its median speed-up over the run)
    for (task, sha), s in median.items():
        if task not in best or s > median[(task, best[task])]:
            best[task] = sha
    explored = faster = 0
    by_family = {}  # family -> [groups, groups with a faster program]
    for members in groups.values():
        family = by_family.setdefault(task_family(members[0]["task"]), [0, 0])
        family[0] += 1
        timed = {m["program_sha256"]: m["speedup"] for m in members
                 if m.get("correct") and m.get("speedup")}
        if len(timed) >= 2:
            explored += 1
        if timed:
            counts = {}
            for m in members:
                counts[m["program_sha256"]] = counts.get(m["program_sha256"], 0) + 1
            mode = max(counts, key=counts.get)
            if mode in timed and max(timed.values()) > FASTER * timed[mode]:
                faster += 1
                family[1] += 1
    steps = sorted({r["step"] for r in rows})
    quarter = len(steps) // 4
    def best_share(chosen):
        picked = [r for r in rows if r["step"] in chosen]
        return (sum(best.get(r["task"]) == r["program_sha256"] for r in picked) / len(picked)
                if picked else None)
    out = {"rollouts": len(rows), "groups": len(groups), "groups_explored": explored,
           "groups_with_faster": faster, "groups_by_family": dict(sorted(by_family.items()))}
    if quarter:
        out["best_share_first_quarter"] = best_share(set(steps[:quarter]))
        out["best_share_last_quarter"] = best_share(set(steps[-quarter:]))
    # Per matrix drawn twice or more: its draws' mean rewards in step order.
    revisited = [[statistics.mean(by_step[step]) for step in sorted(by_step)]
                 for by_step in draws.values() if len(by_step) >= 2]
    if revisited:
        out["revisited_matrices"] = len(revisited)
        out["revisited_reward_first_draw"] = statistics.mean(v[0] for v in revisited)
        out["revisited_reward_last_draw"] = statistics.mean(v[-1] for v in revisited)
        # The learning curve without the draw: visit k's reward averaged over the same matrices,
        # up to the fewest visits any of them had.
        visits = min(len(v) for v in revisited)
        out["revisited_reward_by_visit"] = [statistics.mean(v[k] for v in revisited)
                                            for k in range(visits)]
    return out


def reward_rise(rewards):
    """(mean of the first quarter of the steps, mean of the last quarter), or None under 4 steps."""
    r = [v for v in rewards if v is not None]
    quarter = len(r) // 4
    if quarter == 0:
        return None
    return statistics.mean(r[:quarter]), statistics.mean(r[-quarter:])


def summarise(out, added=()):
    per_seed = {}
    for seed in seeds_in(out):
        entry = {}
        seed_dir = os.path.join(out, f"seed-{seed}")
        evaluations = {pol: read_json(os.path.join(seed_dir, f"eval-{pol}", "evaluate_policy.json"))
                       for pol in POLICIES}
        for pol, doc in evaluations.items():
            if doc:
                s = doc["summary"]
                entry[pol] = {key: s.get(key) for key, _ in COLUMNS}
                entry[pol]["matrices"] = s.get("matrices")
                entry[pol]["correct_rate"] = s.get("correct_rate")
                short = shortfalls(doc)
                if short:
                    entry[pol]["below_heuristic"] = short
        metrics = read_metrics(os.path.join(seed_dir, "ppo-metrics.jsonl"))
        entry["ppo_reward"] = [m.get("reward_mean") for m in metrics]
        entry["ppo_correct"] = [m.get("correct_rate") for m in metrics]
        # Groups whose samples all scored alike carry no signal (left out of the update).
        groups = sum(m.get("groups", 0) for m in metrics)
        if groups:
            entry["ppo_groups"] = groups
            entry["ppo_groups_tied"] = sum(m.get("groups_tied", 0) for m in metrics)
        exploration = rollout_exploration(rollout_log_path(seed_dir))
        if exploration:
            entry["ppo_rollouts"] = exploration
        rise = reward_rise(entry["ppo_reward"])
        if rise is not None:
            entry["ppo_reward_first_quarter"], entry["ppo_reward_last_quarter"] = rise
        sft, ppo = entry.get("sft", {}), entry.get("ppo", {})
        if sft.get("geomean_speedup_greedy") and ppo.get("geomean_speedup_greedy"):
            entry["ppo_over_sft_greedy"] = ppo["geomean_speedup_greedy"] / sft["geomean_speedup_greedy"]
        entry["groups"] = seed_groups(evaluations)
        changes = ppo_changes(evaluations)
        if changes is not None:
            entry["ppo_changes"] = changes
        paired = paired_ppo_gain(evaluations)
        if paired:
            entry["ppo_over_sft_paired"], entry["ppo_programs_changed"], _ = paired
        per_seed[seed] = entry
    for path in added:
        for seed, entry in earlier_seeds(path).items():
            if not any(pol in per_seed.get(seed, {}) for pol in POLICIES):  # OUT's own first
                per_seed[seed] = entry
    per_seed = dict(sorted(per_seed.items()))
    over_seeds = {}
    for pol in POLICIES:
        over_seeds[pol] = {key: spread([e.get(pol, {}).get(key) for e in per_seed.values()])
                           for key, _ in COLUMNS}
    over_seeds["ppo_over_sft_greedy"] = spread([e.get("ppo_over_sft_greedy")
                                                for e in per_seed.values()])
    over_seeds["ppo_over_sft_paired"] = spread([e.get("ppo_over_sft_paired")
                                                for e in per_seed.values()])
    # PPO above SFT "by more than the spread between seeds": the mean gain in greedy geomean
    # against the larger of the two policies' ranges over the seeds.
    sft_g = over_seeds["sft"]["geomean_speedup_greedy"]
    ppo_g = over_seeds["ppo"]["geomean_speedup_greedy"]
    verdicts = {}
    if sft_g["mean"] and ppo_g["mean"]:
        gain = ppo_g["mean"] - sft_g["mean"]
        noise = max(sft_g["range"], ppo_g["range"])
        verdicts["ppo_gain_greedy"] = gain
        verdicts["seed_range_greedy"] = noise
        verdicts["ppo_above_sft_beyond_spread"] = gain > noise
        # The room PPO has within the library's programs: the tuned best's geomean less SFT's
        # greedy one (both from the SFT evaluations). Unless it is larger than the seed range, only
        # programs faster than the tuner's best could meet the check above.
        tuned = over_seeds["sft"]["geomean_speedup_tuned"]["mean"]
        if tuned:
            verdicts["ppo_headroom_greedy"] = tuned - sft_g["mean"]
            verdicts["ppo_headroom_beyond_spread"] = tuned - sft_g["mean"] > noise
    paired = over_seeds["ppo_over_sft_paired"]
    if paired["n"]:
        verdicts["ppo_over_sft_paired_mean"] = paired["mean"]
        verdicts["ppo_over_sft_paired_min"] = paired["min"]
        verdicts["ppo_programs_changed"] = sum(e.get("ppo_programs_changed", 0)
                                               for e in per_seed.values())
    listed = [c for e in per_seed.values() for c in e.get("ppo_changes", [])]
    if any("ppo_changes" in e for e in per_seed.values()):
        for kind in ("fix", "break", "gain", "loss", "even"):
            verdicts[f"ppo_changes_{kind}"] = sum(c["kind"] == kind for c in listed)
    rises = [e["ppo_reward_last_quarter"] - e["ppo_reward_first_quarter"]
             for e in per_seed.values() if "ppo_reward_first_quarter" in e]
    if rises:
        verdicts["ppo_reward_rise_mean"] = statistics.mean(rises)
        verdicts["ppo_reward_rising_seeds"] = sum(r > 0 for r in rises)
        verdicts["ppo_reward_seeds"] = len(rises)
    tied = [e for e in per_seed.values() if "ppo_groups" in e]
    if tied:
        verdicts["ppo_groups_tied"] = (sum(e["ppo_groups_tied"] for e in tied) /
                                       sum(e["ppo_groups"] for e in tied))
    explorations = [e["ppo_rollouts"] for e in per_seed.values() if "ppo_rollouts" in e]
    if explorations:
        groups = sum(x["groups"] for x in explorations)
        verdicts["ppo_groups_explored"] = sum(x["groups_explored"] for x in explorations) / groups
        verdicts["ppo_groups_with_faster"] = sum(x["groups_with_faster"] for x in explorations) / groups
        shifts = [x["best_share_last_quarter"] - x["best_share_first_quarter"]
                  for x in explorations if x.get("best_share_first_quarter") is not None]
        if shifts:
            verdicts["ppo_best_share_rise_mean"] = statistics.mean(shifts)
        changes = [x["revisited_reward_last_draw"] - x["revisited_reward_first_draw"]
                   for x in explorations if "revisited_matrices" in x]
        if changes:
            verdicts["ppo_revisited_reward_rise_mean"] = statistics.mean(changes)
            verdicts["ppo_revisited_reward_rising_seeds"] = sum(c > 0 for c in changes)
    for pol in POLICIES:
        shorts = [e[pol]["below_heuristic"] for e in per_seed.values()
                  if "below_heuristic" in e.get(pol, {})]
        if shorts:
            verdicts[f"{pol}_greedy_below_{SHORTFALL}_heuristic"] = sum(x["below"] for x in shorts)
            verdicts[f"{pol}_greedy_evaluated"] = sum(x["matrices"] for x in shorts)
            verdicts[f"{pol}_greedy_min_over_heuristic"] = min(x["min"] for x in shorts)
    for pol in POLICIES:
        g = over_seeds[pol]["geomean_speedup_greedy"]["mean"]
        h = over_seeds[pol]["geomean_speedup_heuristic"]["mean"]
        t = over_seeds[pol]["geomean_speedup_tuned"]["mean"]
        if g and h:
            verdicts[f"{pol}_greedy_over_heuristic"] = g / h
        if g and t:
            verdicts[f"{pol}_greedy_over_tuned"] = g / t
    return {"seeds": per_seed, "over_seeds": over_seeds, "checks": verdicts,
            "groups": over_seed_groups(per_seed)}


def cell(v, pct=False):
    if v is None:
        return "-"
    return f"{100 * v:.0f}%" if pct else f"{v:.3f}x"


def markdown(doc):
    lines = ["| seed | policy | held-out | " + " | ".join(label for _, label in COLUMNS) + " |",
             "|---|---|---|" + "---|" * len(COLUMNS)]
    for seed, e in sorted(doc["seeds"].items()):
        for pol in POLICIES:
            if pol not in e:
                continue
            r = e[pol]
            cells = [cell(r.get(key), pct=key.endswith("rate")) for key, _ in COLUMNS]
            lines.append(f"| {seed} | {pol.upper()} | {r.get('matrices')} | " + " | ".join(cells) + " |")
    for pol in POLICIES:
        stats = doc["over_seeds"][pol]
        cells = []
        for key, _ in COLUMNS:
            s = stats[key]
            pct = key.endswith("rate")
            cells.append("-" if s["mean"] is None else
                         f"{cell(s['mean'], pct)} (range {cell(s['range'], pct)})")
        lines.append(f"| mean | {pol.upper()} | | " + " | ".join(cells) + " |")
    lines.append("")
    if doc.get("groups"):
        lines += ["| held-out group | SFT greedy | heuristic | tuned best | PPO greedy | heuristic | "
                  "tuned best |",
                  "|---|---|---|---|---|---|---|"]
        lines.append("| (each policy beside its own evaluation's columns) | | | | | | |")
        for name, g in doc["groups"].items():
            lines.append(f"| {name} | " + " | ".join(cell(g.get(col)) for col in GROUP_COLUMNS) + " |")
        lines.append("")
    changed = [(seed, c) for seed, e in sorted(doc["seeds"].items()) for c in e.get("ppo_changes", [])]
    if changed:
        lines += ["| seed | held-out matrix | SFT's greedy program | / heuristic | PPO's | / heuristic | "
                  "change |", "|---|---|---|---|---|---|---|"]
        for seed, c in changed:
            lines.append(f"| {seed} | {c['matrix']} | {c['sft_program']} | "
                         f"{c['sft_over_heuristic']:.3f} | {c['ppo_program']} | "
                         f"{c['ppo_over_heuristic']:.3f} | {c['kind']} |")
        lines.append("")
    families = {}  # over the seeds: where PPO's groups offered a faster program
    for e in doc["seeds"].values():
        for family, (n, f) in e.get("ppo_rollouts", {}).get("groups_by_family", {}).items():
            families.setdefault(family, [0, 0])
            families[family][0] += n
            families[family][1] += f
    if families:
        lines += ["| PPO matrix family | groups | with a faster correct program |", "|---|---|---|"]
        for family, (n, f) in sorted(families.items(), key=lambda kv: -kv[1][1]):
            lines.append(f"| {family} | {n} | {f} ({100 * f / n:.0f}%) |")
        lines.append("")
    for key, value in doc["checks"].items():
        lines.append(f"- {key}: {value:.4f}" if isinstance(value, float) and not isinstance(value, bool)
                     else f"- {key}: {value}")
    return "\n".join(lines) + "\n"


def plot(doc, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("learning_summary: no matplotlib, no PNG")
        return
    fig, (ax_step, ax_visit, ax_held) = plt.subplots(1, 3, figsize=(19, 4.5))
    for seed, e in sorted(doc["seeds"].items()):
        r = [v for v in e["ppo_reward"] if v is not None]
        if r:
            ax_step.plot(range(1, len(r) + 1), r, marker="o", label=f"seed {seed}")
        by_visit = e.get("ppo_rollouts", {}).get("revisited_reward_by_visit")
        if by_visit:
            ax_visit.plot(range(1, len(by_visit) + 1), by_visit, marker="o", label=f"seed {seed}")
    ax_step.set_xlabel("PPO step")
    ax_step.set_ylabel("mean reward of the step's rollouts")
    ax_step.set_title("PPO reward per step (each step draws other matrices)")
    ax_visit.set_xlabel("visit (the k-th step that drew the matrix)")
    ax_visit.set_ylabel("mean reward over the same matrices")
    ax_visit.set_title("PPO reward on the same matrices, by visit")
    ax_visit.xaxis.get_major_locator().set_params(integer=True)
    for ax in (ax_step, ax_visit):
        if ax.lines:
            ax.legend()
    labels = [label for key, label in COLUMNS if key.startswith("geomean")]
    keys = [key for key, _ in COLUMNS if key.startswith("geomean")]
    width = 0.35
    for i, pol in enumerate(POLICIES):
        if all(doc["over_seeds"][pol][k]["mean"] is None for k in keys):
            continue  # not measured (e.g. PPO_STEPS=0)
        means = [doc["over_seeds"][pol][k]["mean"] or 0 for k in keys]
        lo = [m - (doc["over_seeds"][pol][k]["min"] or m) for m, k in zip(means, keys)]
        hi = [(doc["over_seeds"][pol][k]["max"] or m) - m for m, k in zip(means, keys)]
        xs = [x + (i - 0.5) * width for x in range(len(keys))]
        ax_held.bar(xs, means, width, yerr=[lo, hi], capsize=4, label=pol.upper())
    ax_held.set_xticks(range(len(keys)))
    ax_held.set_xticklabels(labels)
    ax_held.axhline(1.0, color="k", lw=0.8)
    ax_held.set_ylabel("geomean speed-up vs cuSPARSE (held out)")
    ax_held.set_title(f"held-out matrices, {len(doc['seeds'])} seeds (bars: mean, whiskers: min-max)")
    ax_held.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"learning_summary: {path}")


def main(argv):
    parser = argparse.ArgumentParser(description="Summarises scripts/gpu-learn.sh over its seeds.")
    parser.add_argument("out", help="gpu-learn.sh's output folder (seed-N/ in it)")
    parser.add_argument("--add", nargs="*", metavar="LEARNING_JSON",
                        help="learning.json of earlier runs of the same recipe: their seeds join OUT's")
    args = parser.parse_args(argv[1:])
    if args.add is not None and not args.add:
        sys.exit("learning_summary: --add needs at least one learning.json")
    if not os.path.isdir(args.out):
        sys.exit(f"learning_summary: {args.out}: not a folder (gpu-learn.sh's output folder)")
    out = args.out
    doc = summarise(out, args.add or ())
    if not doc["seeds"]:
        sys.exit(f"learning_summary: no seed-N folders in {out}")
    with open(os.path.join(out, "learning.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, default=lambda v: None if isinstance(v, float) and math.isnan(v) else v)
    text = markdown(doc)
    with open(os.path.join(out, "learning.md"), "w", encoding="utf-8") as f:
        f.write(text)
    print(text, end="")
    plot(doc, os.path.join(out, "learning.png"))


if __name__ == "__main__":
    main(sys.argv)
