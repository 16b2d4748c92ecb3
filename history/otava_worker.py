"""Run by the history's own venv (.venv-squad, where Apache Otava and numpy live), not
imported by boardlab: JSON on stdin {"series": {key: [values]}, "max_pvalue": p,
"min_magnitude": {key: fraction}, "window": n}; JSON on stdout {key: [change points]},
each {"index": first point of the new level, "pvalue", "mean_1", "mean_2", "std_1",
"std_2", "n_1", "n_2"}."""
import json
import sys

from otava.analysis import compute_change_points


def main():
    req = json.load(sys.stdin)
    out = {}
    for key, values in req["series"].items():
        found = []
        if len(values) >= 4:
            cps, _ = compute_change_points([float(v) for v in values], window_len=req.get("window", 50),
                                           max_pvalue=req["max_pvalue"],
                                           min_magnitude=req["min_magnitude"].get(key, 0.0))
            bounds = [0] + [int(c.index) for c in cps] + [len(values)]
            for i, c in enumerate(cps):
                s = c.stats
                found.append({"index": int(c.index), "pvalue": float(s.pvalue),
                              "mean_1": float(s.mean_1), "mean_2": float(s.mean_2),
                              "std_1": float(s.std_1), "std_2": float(s.std_2),
                              "n_1": bounds[i + 1] - bounds[i], "n_2": bounds[i + 2] - bounds[i + 1]})
        out[key] = found
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
