"""One conformance battery for every strategy: fit/evaluate/predict, custom loops, checkpoints, BackupAndRestore,
mixed_bfloat16 and callbacks equal a one-process run; each strategy launched once (a row of STRATEGIES)."""
from __future__ import annotations

import csv
import dataclasses
import os
import time

import numpy as np
import pytest

import torchstrategy as tf
from tests import _multiprocess as mp
from tests.distribute.conformance import _battery

TPU_TRACED = ("TPUStrategy: a step is one compiled XLA graph, so Python in call() runs when it is traced, not at every "
              "batch (as in TF's tf.function); the ids the battery records are the tracing's")
TPU_VALUES_FROM_FUNCTION = ("TPUStrategy: experimental_distribute_values_from_function hands the one SPMD program "
                            "replica 0's value (the reduce sees 400 = 0 + 100 * 4, not the 4 replicas' sum 1606)")
BATTERY = os.path.abspath(_battery.__file__)


@dataclasses.dataclass(frozen=True)
class Spec:
    """A strategy under test: the expression that builds it (evaluated in _battery's namespace), how it is
    launched ("in_process", "python" = a plain `python battery.py` that starts its own replicas or tasks,
    "torchrun"), how many processes run the battery and how many replicas it has, marks, the tolerance of
    its float32 numbers, and known gaps (test name -> reason: the test is a strict xfail there)."""
    name: str
    expression: str
    launch: str
    processes: int
    replicas: int
    marks: tuple = ()
    atol: float = 1e-5
    gaps: tuple = ()


SLOW, TPU = pytest.mark.slow, pytest.mark.tpu
# A new strategy gets the whole battery by adding one line here.
STRATEGIES = [
    Spec("one_device", 'tf.distribute.OneDeviceStrategy("/cpu:0")', "in_process", 1, 1),
    Spec("mirrored", 'tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])', "python", 2, 2, (SLOW,)),
    Spec("multi_worker", "tf.distribute.MultiWorkerMirroredStrategy()", "torchrun", 2, 2, (SLOW,)),
    Spec("fsdp", 'tf.distribute.experimental.FSDPStrategy(["/cpu:0", "/cpu:1"])', "python", 2, 2, (SLOW,)),
    Spec("central_storage", 'tf.distribute.experimental.CentralStorageStrategy(["/cpu:0", "/cpu:1"])',
         "in_process", 1, 2),
    Spec("parameter_server", "ps_cluster(workers=1, ps=1)", "python", 1, 1, (SLOW,)),
    Spec("tpu", "tf.distribute.TPUStrategy()", "in_process", 1, 4, (TPU,), atol=1e-4,  # XLA:CPU, as test_tpu.py
         gaps=(("test_fit_trains_on_every_row_once_per_epoch_split_evenly_over_the_replicas", TPU_TRACED),
               ("test_merge_call_reduce_to_update_and_distributed_values_give_the_numbers_of_one_process",
                TPU_VALUES_FROM_FUNCTION))),
]
BFLOAT16_ATOL = 2e-3  # bfloat16 keeps ~3 digits; half batches round their sums differently


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "battery" in metafunc.fixturenames:
        params = [pytest.param(spec, id=spec.name, marks=[*spec.marks, *[
            pytest.mark.xfail(strict=True, reason=reason) for test, reason in spec.gaps
            if test == metafunc.function.__name__]]) for spec in STRATEGIES]
        metafunc.parametrize("battery", params, indirect=True, scope="session")


# ---- launching: once per strategy, whatever the order the tests run in --------------------------------------------

_launched: dict = {}


def _launch(spec: Spec, out: str) -> dict:
    start = time.monotonic()
    if spec.launch == "in_process":
        strategy = eval(spec.expression, vars(_battery))  # noqa: S307 - the table above
        try:
            _battery.write(_battery.run(strategy, out), out)
        finally:
            getattr(strategy, "teardown", lambda: None)()
        output = ""
    else:
        args = [BATTERY, out, spec.expression]
        if spec.launch == "torchrun":
            result = mp.run_torchrun([
                "--nnodes=1", f"--nproc_per_node={spec.processes}", "--rdzv-backend=c10d",
                f"--rdzv-endpoint={mp.LOOPBACK}:{mp.free_port()}", f"--local-addr={mp.LOOPBACK}",
                "--max-restarts=0"], args, timeout=300)
        else:
            result = mp.run_python(args, timeout=300)
        output = result.stdout[-3000:] + result.stderr[-6000:]
        assert result.returncode == 0, output
    folder = os.path.join(out, "results")
    processes = {name[:-len(".json")]: mp.read_json(os.path.join(folder, name)) for name in sorted(os.listdir(folder))}
    files = os.path.join(out, "files")
    return {"spec": spec, "out": out, "processes": processes, "output": output,
            "files": sorted(os.listdir(files)) if os.path.isdir(files) else [],
            "seconds": time.monotonic() - start}


def _results(spec: Spec, tmp_path_factory) -> dict:
    """The strategy's results, launched on first use; a launch that failed is not tried again by later tests."""
    if spec.name not in _launched:
        try:
            _launched[spec.name] = _launch(spec, str(tmp_path_factory.mktemp(f"conformance_{spec.name}")))
        except Exception as error:  # noqa: BLE001 - every test of this row reports it
            _launched[spec.name] = error
    if isinstance(_launched[spec.name], Exception):
        raise _launched[spec.name]
    return _launched[spec.name]


@pytest.fixture(scope="session")
def battery(request, tmp_path_factory) -> dict:
    """Everything the strategy of this row reported (one launch per strategy and session)."""
    return _results(request.param, tmp_path_factory)


@pytest.fixture(scope="session")
def reference(tmp_path_factory) -> dict:
    """The one-process reference: the same battery on OneDeviceStrategy in this test process."""
    [one_device] = [spec for spec in STRATEGIES if spec.name == "one_device"]
    return _results(one_device, tmp_path_factory)["processes"]["chief"]


def _chief(battery: dict, behaviour: str) -> dict:
    result = battery["processes"]["chief"][behaviour]
    if "error" in result:
        pytest.fail(f"{behaviour} under {battery['spec'].name} raised:\n{result['error']}\n{battery['output']}",
                    pytrace=False)
    return result


def _every_process(battery: dict, behaviour: str) -> list:
    _chief(battery, behaviour)
    results = [process[behaviour] for process in battery["processes"].values()]
    for result in results:
        assert "error" not in result, result["error"]
    return results


def _close(got, want, atol: float, what: str = "") -> None:
    got, want = list(got), list(want)
    assert len(got) == len(want), (what, len(got), len(want))
    for index, (a, b) in enumerate(zip(got, want)):
        np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), atol=atol,
                                   rtol=atol, err_msg=f"{what} #{index}")


def _close_history(got: dict, want: dict, atol: float) -> None:
    assert set(got) == set(want), (sorted(got), sorted(want))
    for key in want:
        _close(got[key], want[key], atol, f"history[{key!r}]")


def _one_device_model(weights_file: str = None):
    model = _battery.build(tf.distribute.OneDeviceStrategy("/cpu:0"), seed=3)
    if weights_file:
        model.load_weights(weights_file)
    return model


# ---- the behaviours ---------------------------------------------------------------------------------------------

def test_every_process_ran_the_battery_with_the_replicas_of_the_strategy(battery):
    spec = battery["spec"]
    processes = battery["processes"]
    assert len(processes) == spec.processes and "chief" in processes, sorted(processes)
    assert {p["process"]["replicas"] for p in processes.values()} == {spec.replicas}
    assert len({p["process"]["pid"] for p in processes.values()}) == spec.processes
    if spec.processes > 1:  # one intra-op thread per CPU replica process: two replicas do not fight for cores
        assert {p["process"]["threads"] for p in processes.values()} == {1}


def test_fit_trains_on_every_row_once_per_epoch_split_evenly_over_the_replicas(battery):
    _every_process(battery, "samples_seen")
    folder = os.path.join(battery["out"], "seen")
    per_process = {}
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), encoding="utf-8") as handle:
            per_process[name] = [int(value) for value in handle.read().split()]
    everything = [row for rows in per_process.values() for row in rows]
    assert np.bincount(everything, minlength=_battery.ROWS).tolist() == [_battery.EPOCHS] * _battery.ROWS
    if battery["spec"].processes > 1:  # each replica process trained on its share, the same number of rows
        assert len(per_process) == battery["spec"].processes
        assert {len(rows) for rows in per_process.values()} == {_battery.ROWS * _battery.EPOCHS // len(per_process)}


def test_fit_gives_the_history_and_weights_of_one_process(battery, reference):
    atol = battery["spec"].atol
    want = reference["fit"]
    for got in _every_process(battery, "fit"):  # every replica logs the same (reduced) numbers
        _close_history(got["history"], want["history"], atol)
        _close(got["weights"], want["weights"], atol, "weights")
        assert got["iterations"] == want["iterations"] == _battery.EPOCHS * _battery.STEPS
    assert want["history"]["loss"][-1] < want["history"]["loss"][0]


def test_evaluate_gives_the_numbers_of_one_process(battery, reference):
    for got in _every_process(battery, "evaluate"):
        assert set(got["evaluate"]) == {"loss", "accuracy"}
        _close([got["evaluate"][k] for k in ("loss", "accuracy")],
               [reference["evaluate"]["evaluate"][k] for k in ("loss", "accuracy")], battery["spec"].atol, "evaluate")


def test_keras_3_metric_variables_combine_over_replicas_as_in_one_process(battery, reference):
    """add_variable states set by assign_add and assign: 'sum' states count every row once per epoch (a reset
    reaches every replica's or ps task's copy), 'mean' reads one replica's 4 batches, 'only_first_replica' replica
    0's 7, and the argmax hit rate is the accuracy, in fit's history and in evaluate, as in one process."""
    want = reference["keras_metrics"]
    steps, rows = [float(_battery.STEPS)] * _battery.EPOCHS, [float(_battery.ROWS)] * _battery.EPOCHS
    assert want["history"]["rows"] == rows and want["history"]["batches"] == steps
    assert want["history"]["first"] == [7.0] * _battery.EPOCHS
    assert want["history"]["labels"] == [float(_battery.data()[1].sum())] * _battery.EPOCHS
    atol = battery["spec"].atol
    for got in _every_process(battery, "keras_metrics"):
        _close_history(got["history"], want["history"], atol)
        _close(got["history"]["hit_rate"], got["history"]["accuracy"], atol, "hit rate against accuracy")
        assert set(got["evaluate"]) == set(want["evaluate"])
        _close([got["evaluate"][key] for key in sorted(want["evaluate"])],
               [want["evaluate"][key] for key in sorted(want["evaluate"])], atol, "evaluate")
        assert got["evaluate"]["rows"] == _battery.ROWS


def test_predict_returns_every_row_once_in_order(battery, reference):
    for got in _every_process(battery, "predict"):
        predictions = np.asarray(got["predict"])
        assert predictions.shape == (_battery.ROWS, _battery.CLASSES)
        np.testing.assert_allclose(predictions, np.asarray(reference["predict"]["predict"]),
                                   atol=battery["spec"].atol, rtol=0)


def test_a_custom_strategy_run_loop_gives_the_losses_and_weights_of_one_process(battery, reference):
    atol = battery["spec"].atol
    want = reference["custom_loop"]
    for got in _every_process(battery, "custom_loop"):
        assert len(got["losses"]) == _battery.EPOCHS * _battery.STEPS
        _close(got["losses"], want["losses"], atol, "step losses")
        _close(got["weights"], want["weights"], atol, "weights")
        assert got["iterations"] == want["iterations"] == _battery.EPOCHS * _battery.STEPS


def test_a_checkpoint_round_trip_restores_weights_and_optimizer_and_opens_in_one_process(battery, reference):
    atol = battery["spec"].atol
    got = _chief(battery, "checkpoint")
    _close(got["restored"], got["saved"], 0, "restored")  # exactly what was saved
    assert got["iterations"] == [_battery.EPOCHS * _battery.STEPS] * 2
    _close(got["saved"], reference["checkpoint"]["saved"], atol, "saved")
    for other in _every_process(battery, "checkpoint"):
        _close(other["restored"], got["restored"], 0, "restored on every process")
    # the checkpoint files written under the strategy restore in a plain one-process model
    model = _one_device_model()
    with tf.distribute.OneDeviceStrategy("/cpu:0").scope():
        model.optimizer.build(model.trainable_variables)
    tf.train.Checkpoint(model=model).restore(got["path"]).assert_consumed()
    _close([w.tolist() for w in model.get_weights()], got["saved"], 0, "restored in one process")
    assert int(model.optimizer.iterations) == _battery.EPOCHS * _battery.STEPS


def test_a_restored_checkpoint_trains_on_like_the_model_it_was_saved_from(battery, reference):
    # both trained one more epoch: equal only if Adam's slots and step count came back too
    for got in _every_process(battery, "checkpoint_continued"):
        _close(got["continued_restored"], got["continued"], 1e-6, "continued")
        _close(got["continued"], reference["checkpoint_continued"]["continued"], battery["spec"].atol,
               "continued vs one process")


def test_backup_and_restore_resumes_an_interrupted_fit_to_the_uninterrupted_weights(battery, reference):
    atol = battery["spec"].atol
    for got in _every_process(battery, "backup_and_restore"):
        assert got["interrupted"] == _battery.INTERRUPTION
        # the backup of epoch 1 was restored: the resumed fit ran epochs 2 and 3 only
        assert len(got["history"]["loss"]) == _battery.EPOCHS - _battery.INTERRUPTED_AT[0]
        _close(got["history"]["loss"], reference["fit"]["history"]["loss"][_battery.INTERRUPTED_AT[0]:], atol,
               "resumed losses vs uninterrupted")
        _close(got["weights"], reference["fit"]["weights"], atol, "weights vs uninterrupted")
        assert got["iterations"] == _battery.EPOCHS * _battery.STEPS


def test_mixed_bfloat16_fit_matches_one_process_under_the_same_policy(battery, reference):
    want = reference["mixed_precision"]
    for got in _every_process(battery, "mixed_precision"):
        assert (got["compute_dtype"], got["variable_dtype"], got["weight_dtypes"]) == \
            ("bfloat16", "float32", ["float32"])
        _close_history(got["history"], want["history"], BFLOAT16_ATOL)
        _close(got["weights"], want["weights"], BFLOAT16_ATOL, "weights")
    assert tf.keras.mixed_precision.global_policy().name == "float32"


def test_callbacks_history_keys_agreed_stops_and_only_the_chief_writes_files(battery, reference):
    atol = battery["spec"].atol
    want = reference["callbacks"]
    for got in _every_process(battery, "callbacks"):
        # the chief alone set stop_training after epoch 2: every replica stopped there with it
        assert sorted(got["history"]) == ["accuracy", "loss", "val_accuracy", "val_loss"]
        assert len(got["history"]["loss"]) == 2
        _close_history(got["history"], want["history"], atol)
        _close(got["weights"], want["weights"], atol, "weights")
        # EarlyStopping (no improvement of 100 for 1 epoch) stopped everyone after 2 epochs, best weights back
        assert got["stopped_epoch"] == 1 and len(got["early_history"]["loss"]) == 2
        _close_history(got["early_history"], want["early_history"], atol)
        _close(got["early_weights"], want["early_weights"], atol, "early-stopped weights")
    # each process named its files after itself: only the chief's exist (CSVLogger, ModelCheckpoint)
    assert battery["files"] == ["chief-1.weights.h5", "chief-2.weights.h5", "chief.csv"]
    chief = _chief(battery, "callbacks")
    with open(os.path.join(battery["out"], "files", "chief.csv"), newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [int(row["epoch"]) for row in rows] == [0, 1]
    _close([float(row["loss"]) for row in rows], chief["history"]["loss"], 1e-6, "CSVLogger losses")
    _close([float(row["val_loss"]) for row in rows], chief["history"]["val_loss"], 1e-6, "CSVLogger val_loss")
    # ModelCheckpoint's last file holds the final weights, and opens in one process
    saved = _one_device_model(os.path.join(battery["out"], "files", "chief-2.weights.h5"))
    _close([w.tolist() for w in saved.get_weights()], chief["weights"], 0, "ModelCheckpoint file")


def test_a_model_outside_the_scope_is_refused_for_training_on_a_multi_process_job(battery):
    spec = battery["spec"]
    for got in _every_process(battery, "outside_scope"):
        if spec.processes > 1:  # every process refuses, naming the strategy and the remedy, before any step
            assert got["refused"] is not None and "was created outside the scope of the" in got["refused"]
            assert f"({spec.replicas} replicas in {spec.processes} processes)" in got["refused"]
            assert "with strategy.scope():" in got["refused"]
        else:  # one process: the default strategy trains it, as TF does
            assert got["refused"] is None and got["iterations"] == _battery.STEPS


def test_merge_call_reduce_to_update_and_distributed_values_give_the_numbers_of_one_process(battery, reference):
    spec, want = battery["spec"], reference["distributed_api"]
    for got in _every_process(battery, "distributed_api"):
        # merge_call's merge_fn ran once per process in cross-replica context and reduced the whole global batch
        _close(sorted(got["merged"]), sorted(want["merged"]), 1e-4, "merge_call sums")
        assert got["worker_devices"] and all(isinstance(d, str) for d in got["worker_devices"])
        if spec.name == "parameter_server":  # closures ran on the one worker, which knows its index
            assert got["worker_indices"] == [0]
            continue  # the replica function runs in closures there; the rest is cross-replica on the workers
        _close(got["reduced"], want["merged"], 1e-4, "extended.reduce_to")
        _close([pair for pairs in got["batch_reduced"] for pair in pairs],
               [value for value in want["merged"] for _ in range(2)], 1e-4, "extended.batch_reduce_to")
        _close([got["total"]], [sum(want["merged"])], 1e-3, "DistributedDataset.reduce")
        # one value per replica from its ValueContext: ids 0..n-1, each plus 100 * n
        replicas = spec.replicas
        assert got["id_sum"] == sum(range(replicas)) + 100.0 * replicas * replicas
        assert got["updated"] == 3.0
    chief = _chief(battery, "distributed_api")
    assert chief["should_checkpoint"] is True
    assert [p["distributed_api"]["should_checkpoint"] for name, p in battery["processes"].items()
            if name != "chief"] == [False] * (spec.processes - 1)


def test_an_uneven_global_batch_is_refused_until_extended_allows_it_then_trains_on_every_row(battery, reference):
    """`strategy.extended.allow_uneven_split` is torchstrategy's switch (the constructors keep TF's signature):
    off, a global batch that does not divide over the replicas is refused before a step, naming valid sizes;
    on, it is split (a replica gets a row fewer) and fit trains every row once, the same weights everywhere.
    TF 2.21's Keras fit has no numbers to match: it fails on such a batch (AddN of [8,6] and [7,6] gradients).
    One replica equals the one-process run; several weight their replicas' mean losses equally, so the
    result differs from it by that weighting only (close, not equal)."""
    spec = battery["spec"]
    results = _every_process(battery, "uneven_split")
    for result in results:
        assert result["default"] is False and result["after_set"] is True
        assert "takes True or False" in result["bad_value"]
        if spec.name == "parameter_server":
            continue
        if spec.replicas > 1:
            assert f"global batch size {_battery.BATCH - 1} is not divisible by the {spec.replicas} replicas" in (
                result["refused"] or ""), result["refused"]
            assert "strategy.extended.allow_uneven_split = True" in result["refused"]
        else:
            assert result["refused"] is None
        expected = reference["uneven_split"]
        assert result["iterations"] == expected["iterations"] == -(-_battery.ROWS // (_battery.BATCH - 1))
        atol = spec.atol if spec.replicas == 1 else 0.05
        for ours, theirs, start in zip(result["weights"], expected["weights"], _battery.initial_weights()):
            np.testing.assert_allclose(ours, theirs, atol=atol, rtol=1e-4)
            assert not np.allclose(ours, start)  # it trained
        np.testing.assert_allclose(result["loss"], expected["loss"], atol=atol, rtol=1e-4)
        assert result["weights"] == results[0]["weights"]  # every process holds the same model
