"""Cross-check dpbench's dp_xgboost against Sarus' dp-xgboost package (the one paper 001 ran), on the same data.

Both get the same mapped features (dpbench's public feature map and bounds: [0, 1] for indicators, else
+-log(1 + feature_bound) after sign(x) log(1 + |x|)) and the same
per-tree budget (the epsilon_t dpbench's accountant gives for (epsilon, delta, rounds, subsample)), with
objective reg:squarederror, base_score 0.5, max_depth 6, learning rate 0.3, lambda 0.1, min_child_weight 50.
The package needs numpy < 2 and a build of its C++ (minutes): make a separate venv, e.g.

    python3 -m venv /tmp/dpxgb && /tmp/dpxgb/bin/pip install "numpy<2" dp-xgboost==0.2.10

then  python scripts/dp_xgboost_crosscheck.py --package-python /tmp/dpxgb/bin/python [--datasets telco ...]

Writes results/dp_xgboost_crosscheck/crosscheck.parquet (one row per fit) and prints mean +/- std of test F1 and
AUROC per (dataset, epsilon, rounds, implementation).  The package is not seeded (its noise reads the clock),
so its spread is over repetitions one second apart.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import f1_score, roc_auc_score

from dpbench import algorithms
from dpbench.algorithms.dp_xgboost import feature_bounds, feature_map
from dpbench.data import load_dataset
from dpbench.privacy.subsampling import per_round_epsilon

WORKER = Path(__file__).with_name("dp_xgboost_package_worker.py")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--package-python", required=True, help="python of a venv with dp-xgboost 0.2.10, numpy<2")
    ap.add_argument("--datasets", nargs="+", default=["telco", "cod-rna"])
    ap.add_argument("--epsilons", nargs="+", type=float, default=[1.0, 10.0])
    ap.add_argument("--rounds", nargs="+", type=int, default=[10])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default="results/dp_xgboost_crosscheck")
    args = ap.parse_args(argv)
    data_dir = os.environ.get("DPBENCH_DATA_DIR")
    rows = []
    for name in args.datasets:
        d = load_dataset({"name": name}, data_dir=data_dir)
        for eps in args.epsilons:
            for rounds in args.rounds:
                est0 = algorithms.make("dp_xgboost", epsilon=eps, n_rounds=rounds)
                eps_t = per_round_epsilon(eps, est0.delta, rounds, est0.subsample)
                low, high, nominal = feature_bounds(d.feature_types, d.X_train.shape[1], est0.feature_bound)
                params = {"objective": "reg:squarederror", "tree_method": "approxDP", "dp_epsilon_per_tree": eps_t,
                          "max_depth": est0.max_depth, "learning_rate": est0.learning_rate,
                          "lambda": est0.reg_lambda, "base_score": 0.5, "subsample": est0.subsample,
                          "min_child_weight": est0.min_child_weight, "nthread": 1}
                with tempfile.TemporaryDirectory() as tmp:
                    inp, out = Path(tmp) / "in.npz", Path(tmp) / "out.npz"
                    np.savez(inp, X_train=feature_map(d.X_train, nominal, est0.feature_bound),
                             y_train=d.y_train.astype(float), X_test=feature_map(d.X_test, nominal, est0.feature_bound),
                             y_test=d.y_test.astype(float),
                             lo=low, hi=high,
                             params=json.dumps(params), rounds=rounds, repeats=args.repeats)
                    subprocess.run(["nice", "-n", "10", args.package_python, str(WORKER), str(inp), str(out)],
                                   check=True, capture_output=True)
                    package_scores = np.load(out)["scores"]
                for rep, s in enumerate(package_scores):
                    rows.append({"dataset": name, "epsilon": eps, "rounds": rounds,
                                 "implementation": "dp-xgboost 0.2.10",
                                 "repeat": rep, "test_f1": f1_score(d.y_test, s > 0.5),
                                 "test_auroc": roc_auc_score(d.y_test, s), "epsilon_per_tree": eps_t})
                for seed in range(args.repeats):
                    est = algorithms.make("dp_xgboost", epsilon=eps, n_rounds=rounds, random_state=seed,
                                          feature_types=list(d.feature_types))
                    s = est.fit(d.X_train, d.y_train).decision_function(d.X_test)
                    rows.append({"dataset": name, "epsilon": eps, "rounds": rounds, "implementation": "dpbench",
                                 "repeat": seed, "test_f1": f1_score(d.y_test, s > 0),
                                 "test_auroc": roc_auc_score(d.y_test, s), "epsilon_per_tree": eps_t})
                print(f"{name} eps={eps} rounds={rounds} done", flush=True)
    table = pd.DataFrame(rows)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    table.to_parquet(Path(args.out) / "crosscheck.parquet")
    summary = table.groupby(["dataset", "epsilon", "rounds", "implementation"])[["test_f1", "test_auroc"]].agg(
        ["mean", "std"]).round(3)
    print(summary.to_string())


if __name__ == "__main__":
    main()
