"""Run by the *package's* interpreter (a venv with dp-xgboost 0.2.10 and numpy < 2), never imported by dpbench.

Reads an .npz written by dp_xgboost_crosscheck.py (mapped features, labels, bounds, parameters) and fits the
Sarus package once per requested repetition, one second apart (the package seeds its noise with time(0)),
writing the test scores to the output .npz.
"""

import json
import sys
import time

import dp_xgboost as xgb
import numpy as np

data = np.load(sys.argv[1])
params = json.loads(str(data["params"]))
rounds = int(data["rounds"])
lo, hi = data["lo"].tolist(), data["hi"].tolist()
dtrain = xgb.DMatrix(data["X_train"], label=data["y_train"], feature_min=lo, feature_max=hi)
dtest = xgb.DMatrix(data["X_test"], label=data["y_test"], feature_min=lo, feature_max=hi)
scores = []
for _ in range(int(data["repeats"])):
    time.sleep(1.1)  # a new time(0) seed
    booster = xgb.train(params, dtrain, num_boost_round=rounds)
    scores.append(booster.predict(dtest))
np.savez(sys.argv[2], scores=np.array(scores))
