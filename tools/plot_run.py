#!/usr/bin/env python3
"""Draws every metric of a training run as PNG curves: RUN_DIR/metrics.jsonl (one JSON object per
line: step, time and named scalars, from `sparserl pretrain | train-sft | train-ppo`) into
OUT_DIR (default RUN_DIR/plots): <metric>.png for each numeric metric against step, and
all_metrics.png with all of them. A metric absent from a line (val_loss exists only at
evaluations, and not at all in runs without validation data) or null there (NaN) has no point at
that step: nothing is drawn for it. Prints the path of every file written. `sparserl plot RUN_DIR`
runs this.

usage: python3 tools/plot_run.py RUN_DIR [OUT_DIR]
"""
import json
import math
import os
import re
import sys


def fail(message, code=1):
    print(f"plot_run: error: {message}", file=sys.stderr)
    sys.exit(code)


def read_series(path):
    """{metric: ([steps], [values])} of the numeric fields, in file order. A last line without its
    newline (a run still writing) is skipped, as sparserl's reader does."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    lines = text.split("\n")
    if not text.endswith("\n"):
        lines = lines[:-1]
    series = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            fail(f"{path}:{number}: not JSON: {e.msg}")
        if not isinstance(record, dict) or not isinstance(record.get("step"), int):
            fail(f"{path}:{number}: expected an object with an integer \"step\"")
        for key, value in record.items():
            if key in ("step", "time") or isinstance(value, bool):
                continue
            if isinstance(value, (int, float)) and math.isfinite(value):
                steps, values = series.setdefault(key, ([], []))
                steps.append(record["step"])
                values.append(float(value))
    return series


def moving_average(values, window):
    out, total = [], 0.0
    for i, v in enumerate(values):
        total += v
        if i >= window:
            total -= values[i - window]
        out.append(total / min(i + 1, window))
    return out


def draw(ax, name, steps, values):
    few = len(values) < 30
    ax.plot(steps, values, marker="o" if few else None, ms=3, lw=1, alpha=1 if few else 0.35,
            label=name)
    if not few:  # noisy per-step scalars: the trend over ~1/20 of the run on top
        ax.plot(steps, moving_average(values, max(2, len(values) // 20)), lw=1.6,
                label="moving average")
        ax.legend(fontsize=7)
    ax.set_title(name, fontsize=10)
    ax.set_xlabel("step")
    ax.grid(alpha=0.3)


def main(argv):
    if len(argv) not in (2, 3):
        fail("usage: plot_run.py RUN_DIR [OUT_DIR]", 2)
    run_dir = argv[1]
    out_dir = argv[2] if len(argv) == 3 else os.path.join(run_dir, "plots")
    try:
        import matplotlib
    except ImportError:
        fail(f"{sys.executable} has no matplotlib (apt-get install python3-matplotlib)", 3)
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = read_series(os.path.join(run_dir, "metrics.jsonl"))
    if not series:
        fail(f"{run_dir}/metrics.jsonl: no numeric metrics to plot")
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for name, (steps, values) in sorted(series.items()):
        fig, ax = plt.subplots(figsize=(6, 3.6))
        draw(ax, name, steps, values)
        fig.tight_layout()
        path = os.path.join(out_dir, re.sub(r"[^A-Za-z0-9_.-]", "_", name) + ".png")
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(path)
    cols = min(3, len(series))
    rows = math.ceil(len(series) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.2 * rows), squeeze=False)
    for ax, (name, (steps, values)) in zip(axes.flat, sorted(series.items())):
        draw(ax, name, steps, values)
    for ax in list(axes.flat)[len(series):]:
        ax.axis("off")
    fig.suptitle(os.path.basename(os.path.abspath(run_dir)))
    fig.tight_layout()
    path = os.path.join(out_dir, "all_metrics.png")
    fig.savefig(path, dpi=90)
    written.append(path)
    for path in written:
        print(path)


if __name__ == "__main__":
    main(sys.argv)
