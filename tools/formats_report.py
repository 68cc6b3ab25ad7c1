#!/usr/bin/env python3
"""The new formats of issue 18 in a `sparserl bench` result: per matrix, the best CSR16 candidate
and the best BSR candidate (with its block shape) next to cuSPARSE, the tuned best and the
heuristic, from bench.json's ranked candidates.

    tools/formats_report.py formats.json bench.json...    prints a table, writes formats.json
"""
import json
import sys


def best_of(ranked, prefix):
    """The fastest correct candidate whose description starts with `prefix`, or None."""
    times = [(c["ms"], c["program"]) for c in ranked
             if c["correct"] and c.get("ms") and c["program"].startswith(prefix)]
    return min(times) if times else None


def speedup(cusparse_ms, ms):
    return cusparse_ms / ms if cusparse_ms and ms else None


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    benches = [json.load(open(path)) for path in sys.argv[2:]]
    rows = []
    for m in [m for bench in benches for m in bench["matrices"]]:
        ranked = m.get("ranked", [])
        base = m.get("cusparse_ms")
        row = {"matrix": m["matrix"], "nnz": m["nnz"], "cusparse_ms": base,
               "cusparse_algorithm": m.get("cusparse_algorithm"),
               "best": m.get("best"), "speedup_best": m.get("speedup_best"),
               "heuristic": m.get("heuristic"), "speedup_heuristic": m.get("speedup_heuristic")}
        for label, prefix in (("csr16", "csr16_vector "), ("bsr", "bsr ")):
            found = best_of(ranked, prefix)
            row[label] = found[1] if found else None
            row[label + "_ms"] = found[0] if found else None
            row["speedup_" + label] = speedup(base, found[0]) if found else None
            row[label + "_offered"] = sum(c["program"].startswith(prefix) for c in ranked)
        rows.append(row)
    json.dump({"suite": benches[0].get("suite"), "op": benches[0].get("op"),
               "executor": benches[0].get("executor"), "matrices": rows}, open(sys.argv[1], "w"),
              indent=2)

    def found_text(r, label):
        if r[label]:
            return r[label]
        offered = r[label + "_offered"]
        return "(%d offered, none timed and correct)" % offered if offered else "(none offered)"

    def x(v):
        return "%.3fx" % v if isinstance(v, (int, float)) else "-"

    print("%-20s %9s %8s %8s %8s %8s  %s | %s" % ("matrix", "cuSPARSE", "best", "heur", "CSR16",
                                                 "BSR", "best CSR16", "best BSR"))
    for r in rows:
        print("%-20s %9s %8s %8s %8s %8s  %s | %s" % (
            r["matrix"], "%.4f" % r["cusparse_ms"] if r["cusparse_ms"] else "-",
            x(r["speedup_best"]), x(r["speedup_heuristic"]), x(r["speedup_csr16"]),
            x(r["speedup_bsr"]), found_text(r, "csr16"), found_text(r, "bsr")))


if __name__ == "__main__":
    main()
