#!/usr/bin/env python3
"""Draws evaluate_policy.json (from `sparserl evaluate-policy`) as a PNG: per matrix the greedy
program's, the best of K samples', the heuristic's and the tuned best's speed-up over cuSPARSE
(absent bars where a speed-up is null: not timed, or not correct), and the correct rate of the K
samples.

usage: python3 tools/plot_policy_eval.py DIR/evaluate_policy.json DIR/evaluate_policy.png
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def fmt(v):
    return "-" if v is None else f"{v:.2f}x"


def main(src, dst):
    with open(src, encoding="utf-8") as f:
        doc = json.load(f)
    rows = doc["matrices"]
    names = [r["matrix"] for r in rows]
    xs = list(range(len(names)))
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(max(8, 0.6 * len(names) + 4), 8), sharex=True)
    columns = [("speedup_greedy", "greedy"), ("speedup_best_of_k", "best of K"),
               ("speedup_heuristic", "heuristic"), ("speedup_tuned", "tuned best")]
    width = 0.8 / len(columns)
    for c, (key, label) in enumerate(columns):
        pts = [(x + (c - 1.5) * width, r[key]) for x, r in zip(xs, rows) if r[key] is not None]
        if pts:
            ax1.bar([p[0] for p in pts], [p[1] for p in pts], width, label=label)
    ax1.axhline(1.0, color="k", lw=0.8)
    s = doc["summary"]
    ax1.set_ylabel("speed-up vs cuSPARSE")
    ax1.set_title(f"{doc.get('model', 'policy')} on {doc['executor']}: geomean greedy "
                  f"{fmt(s['geomean_speedup_greedy'])}, best of K "
                  f"{fmt(s['geomean_speedup_best_of_k'])}, heuristic "
                  f"{fmt(s['geomean_speedup_heuristic'])}, tuned {fmt(s['geomean_speedup_tuned'])}",
                  fontsize=9)
    if ax1.get_legend_handles_labels()[0]:
        ax1.legend(fontsize=8)
    else:
        ax1.text(0.5, 0.5, "no speed-ups (this executor does not time)", ha="center",
                 transform=ax1.transAxes)
    ax2.bar([x - 0.2 for x in xs], [r["compile_rate"] for r in rows], 0.4, label="compiled")
    ax2.bar([x + 0.2 for x in xs], [r["correct_rate"] for r in rows], 0.4, label="correct")
    ax2.set_ylim(0, 1.05)
    ax2.set_ylabel(f"share of {doc['samples_per_matrix']} samples")
    ax2.legend(fontsize=8)
    ax2.set_xticks(xs)
    ax2.set_xticklabels(names, rotation=40, ha="right", fontsize=8)
    fig.tight_layout()
    fig.savefig(dst, dpi=100)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: plot_policy_eval.py evaluate_policy.json out.png", file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1], sys.argv[2])
