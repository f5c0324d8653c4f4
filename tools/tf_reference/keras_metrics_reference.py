"""Freezes Keras's numbers for the metrics torchstrategy adds (run under the TF reference env, outside the suite):
/work/tf-venv/bin/python tools/tf_reference/keras_metrics_reference.py -> tests/keras/metrics/keras_metrics_reference.json"""
import json
import os

import keras
import numpy as np

rng = np.random.RandomState(11)


def arr(x):
    return np.asarray(x).tolist()


probs = rng.uniform(0, 1, (2, 8, 3)).astype("float32")          # two batches of 8 x 3
binary = (rng.uniform(size=(2, 8, 3)) > 0.5).astype("float32")
onehot = np.eye(3, dtype="float32")[rng.randint(0, 3, (2, 8))]
scores = rng.uniform(0, 1, (2, 8)).astype("float32")
labels01 = (rng.uniform(size=(2, 8)) > 0.4).astype("float32")
reg_true = rng.uniform(0, 3, (2, 8, 3)).astype("float32")
reg_pred = (reg_true + rng.normal(scale=0.5, size=(2, 8, 3))).astype("float32")
reg_pos = np.abs(reg_pred) + 0.1
weights = rng.uniform(0, 2, (2, 8)).astype("float32")
seg_true = rng.randint(0, 3, (2, 8)).astype("int64")
seg_true[0, 0] = 255
seg_pred = rng.randint(0, 3, (2, 8)).astype("int64")
int_weights = rng.randint(0, 3, (2, 8)).astype("float32")
logits = rng.normal(size=(2, 8, 3)).astype("float32")

inputs = dict(probs=probs, binary=binary, onehot=onehot, scores=scores, labels01=labels01, reg_true=reg_true,
              reg_pred=reg_pred, reg_pos=reg_pos, weights=weights, seg_true=seg_true, seg_pred=seg_pred,
              int_weights=int_weights, logits=logits)
M = keras.metrics
# (case, class, kwargs, y_true key, y_pred key, weights key or None)
cases = [
    ("hinge", "Hinge", {}, "binary", "logits", "weights"),
    ("squared_hinge", "SquaredHinge", {}, "binary", "logits", "weights"),
    ("categorical_hinge", "CategoricalHinge", {}, "onehot", "logits", "weights"),
    ("poisson", "Poisson", {}, "reg_true", "reg_pos", "weights"),
    ("logcosh", "LogCoshError", {}, "reg_true", "reg_pred", "weights"),
    ("pearson", "PearsonCorrelation", {}, "reg_true", "reg_pred", None),
    ("concordance", "ConcordanceCorrelation", {}, "reg_true", "reg_pred", None),
    ("pearson_axis0", "PearsonCorrelation", {"axis": 0}, "reg_true", "reg_pred", None),
    ("r2", "R2Score", {}, "reg_true", "reg_pred", "weights"),
    ("r2_variance", "R2Score", {"class_aggregation": "variance_weighted_average"}, "reg_true", "reg_pred", None),
    ("r2_none_adjusted", "R2Score", {"class_aggregation": None, "num_regressors": 2}, "reg_true", "reg_pred", None),
    ("tp", "TruePositives", {}, "labels01", "scores", "weights"),
    ("fp", "FalsePositives", {"thresholds": [0.2, 0.5, 0.8]}, "labels01", "scores", "weights"),
    ("tn", "TrueNegatives", {"thresholds": 0.3}, "labels01", "scores", None),
    ("fn", "FalseNegatives", {}, "labels01", "scores", "weights"),
    ("sens_at_spec", "SensitivityAtSpecificity", {"specificity": 0.6}, "labels01", "scores", "weights"),
    ("spec_at_sens", "SpecificityAtSensitivity", {"sensitivity": 0.7, "num_thresholds": 50}, "labels01", "scores",
     None),
    ("prec_at_rec", "PrecisionAtRecall", {"recall": 0.5}, "labels01", "scores", "weights"),
    ("rec_at_prec", "RecallAtPrecision", {"precision": 0.6}, "labels01", "scores", None),
    ("rec_at_prec_class", "RecallAtPrecision", {"precision": 0.5, "class_id": 1}, "binary", "probs", None),
    ("f1_none", "F1Score", {}, "onehot", "probs", None),
    ("f1_macro_thr", "F1Score", {"average": "macro", "threshold": 0.5}, "binary", "probs", "weights"),
    ("f1_micro", "F1Score", {"average": "micro", "threshold": 0.4}, "binary", "probs", None),
    ("f1_weighted", "F1Score", {"average": "weighted"}, "onehot", "probs", "weights"),
    ("fbeta", "FBetaScore", {"average": "macro", "beta": 2.0, "threshold": 0.5}, "binary", "probs", None),
    ("iou", "IoU", {"num_classes": 3, "target_class_ids": [0, 2]}, "seg_true", "seg_pred", None),
    ("mean_iou_ignore", "MeanIoU", {"num_classes": 3, "ignore_class": 255}, "seg_true", "seg_pred", "int_weights"),
    ("binary_iou", "BinaryIoU", {"target_class_ids": [0, 1], "threshold": 0.4}, "labels01", "scores", None),
    ("binary_iou_1", "BinaryIoU", {"target_class_ids": [1]}, "labels01", "scores", "int_weights"),
    ("one_hot_iou", "OneHotIoU", {"num_classes": 3, "target_class_ids": [1]}, "onehot", "probs", None),
    ("one_hot_mean_iou", "OneHotMeanIoU", {"num_classes": 3}, "onehot", "probs", None),
]
out = []
for case, cls, kwargs, yt, yp, wk in cases:
    metric = getattr(M, cls)(**kwargs)
    for batch in range(2):
        sw = None if wk is None else inputs[wk][batch]
        metric.update_state(inputs[yt][batch], inputs[yp][batch], sample_weight=sw)
    after_two = np.asarray(metric.result()).tolist()
    metric.reset_state()
    after_reset = np.asarray(metric.result()).tolist() if cls not in ("R2Score",) else None
    metric.update_state(inputs[yt][1], inputs[yp][1])
    config = metric.get_config()
    out.append(dict(case=case, cls=cls, kwargs=kwargs, y_true=yt, y_pred=yp, weights=wk, after_two=after_two,
                    after_reset=after_reset, one_batch=np.asarray(metric.result()).tolist(), config=config,
                    variables=[v.path.split("/")[-1] for v in metric.variables]))
functions = {}
for fn in ("pearson_correlation", "concordance_correlation"):
    functions[fn] = np.asarray(getattr(M, fn)(reg_true[0], reg_pred[0])).tolist()
path = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "keras", "metrics", "keras_metrics_reference.json")
os.makedirs(os.path.dirname(path), exist_ok=True)
with open(path, "w") as f:
    json.dump({"keras_version": keras.__version__, "inputs": {k: arr(v) for k, v in inputs.items()},
               "cases": out, "functions": functions}, f)
print("wrote", path)
