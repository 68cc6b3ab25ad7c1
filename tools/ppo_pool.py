#!/usr/bin/env python3
"""PPO's matrix pool for scripts/gpu-learn.sh: COUNT samples of an SFT data file's training split
with >= MIN_NNZ nonzeros, labelled by the heuristic (or by timing with --from timed), taken round
robin over strata in a fixed order so that no kind of matrix fills the pool.

Strata: "family_order" (generator family x node order) or "template_rows" (the label program's
template x its rows' mean length: under 5, 5-12, 12 or more), for templates whose best parameter
follows the row length (RCSR and csr_vector lanes), which family x order leaves to chance.

    tools/ppo_pool.py SFT_DATA.jsonl.gz OUT.jsonl --count 72 --min-nnz 1000000 \
        [--from heuristic|timed] [--strata family_order|template_rows]

Writes OUT (one sample a line, as in SFT_DATA) and prints how many it holds.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import re
import sys

EXPERT_LINE = re.compile(r"// expert: (\S+)")


def nonzeros(sample):
    """Stated by a sample stored by its generator; counted on one stored as coordinates."""
    return int(sample["nnz"]) if "nnz" in sample else len(sample.get("rows", []))


def row_length_class(sample):
    rows = int(sample.get("shape", [1])[0]) or 1
    mean = nonzeros(sample) / rows
    return 0 if mean < 5 else 1 if mean < 12 else 2


def stratum(sample, strata):
    if strata == "template_rows":
        template = EXPERT_LINE.search(sample.get("code", ""))
        return (template.group(1) if template else "", row_length_class(sample))
    generator = sample.get("generator", {})
    return (generator.get("family", sample.get("family", "")), generator.get("order", "natural"))


def pick(lines, count, min_nnz, timed, strata):
    groups = collections.defaultdict(list)
    for line in lines:
        if not line.strip():
            continue
        sample = json.loads(line)
        if sample.get("split", "train") != "train" or nonzeros(sample) < min_nnz:
            continue
        if (sample.get("label") == "heuristic") == timed:
            continue
        groups[stratum(sample, strata)].append(line)
    picked = []
    while len(picked) < count and any(groups.values()):
        for key in sorted(groups):
            if groups[key] and len(picked) < count:
                picked.append(groups[key].pop(0))
    return picked


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sft_data")
    parser.add_argument("out")
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--min-nnz", type=int, default=0)
    parser.add_argument("--from", dest="source", choices=("heuristic", "timed"),
                        default="heuristic")
    parser.add_argument("--strata", choices=("family_order", "template_rows"),
                        default="family_order")
    args = parser.parse_args(argv)
    try:
        with gzip.open(args.sft_data, "rt") as f:
            lines = f.readlines()
    except (OSError, EOFError) as e:
        parser.exit(2, f"ppo_pool: cannot read {args.sft_data}: {e}\n")
    try:
        picked = pick(lines, args.count, args.min_nnz, args.source == "timed", args.strata)
    except (ValueError, TypeError, AttributeError) as e:
        parser.exit(2, f"ppo_pool: {args.sft_data} is not SFT data (one JSON sample a line): {e}\n")
    with open(args.out, "w") as o:
        o.writelines(line if line.endswith("\n") else line + "\n" for line in picked)
    print(len(picked))


if __name__ == "__main__":
    main(sys.argv[1:])
