#!/usr/bin/env python3
"""Draws bench.json (from `sparserl bench`) as a PNG: speed-up over cuSPARSE per matrix (tuned best
and heuristic pick) and the tuned best's share of the measured copy-bandwidth roofline.

usage: python3 tools/plot_bench.py DIR/bench.json DIR/bench.png
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(src, dst):
    doc = json.load(open(src))
    rows = doc["matrices"]
    names = [r["matrix"] for r in rows]
    best = [r["speedup_best"] or 0 for r in rows]
    heur = [r["speedup_heuristic"] or 0 for r in rows]
    roof = [100 * (r["best_roofline_fraction"] or 0) for r in rows]
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(12, 8), sharex=True)
    xs = range(len(names))
    ax1.bar([x - 0.2 for x in xs], best, 0.4, label="tuned best")
    ax1.bar([x + 0.2 for x in xs], heur, 0.4, label="heuristic pick")
    ax1.axhline(1.0, color="k", lw=0.8)
    s = doc["summary"]
    ax1.set_ylabel("speed-up vs cuSPARSE")
    ax1.set_title(f"sparserl {doc['op']} on {doc['executor']}: geomean best "
                  f"{s['geomean_speedup_best']:.2f}x, heuristic {s['geomean_speedup_heuristic']:.2f}x")
    ax1.legend()
    ax2.bar(xs, roof, 0.6, color="tab:green")
    ax2.axhline(75, color="r", lw=0.8, ls="--")
    ax2.set_ylabel(f"% of {doc['peak_copy_gbps']:.0f} GB/s copy bandwidth")
    ax2.set_xticks(list(xs))
    ax2.set_xticklabels(names, rotation=40, ha="right")
    fig.tight_layout()
    fig.savefig(dst, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
