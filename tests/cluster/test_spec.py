"""ClusterSpec (tf.train.ClusterSpec) and ProcessSpec: parsing, queries, immutability, bad input."""
from __future__ import annotations

import pytest

from torchstrategy.cluster.spec import ClusterSpec, ProcessSpec

TF_DOC_CLUSTER = {"worker": ["worker0.example.com:2222", "worker1.example.com:2222", "worker2.example.com:2222"],
                  "ps": ["ps0.example.com:2222", "ps1.example.com:2222"]}


def test_dense_jobs_answer_tf_queries():
    spec = ClusterSpec(TF_DOC_CLUSTER)
    assert spec.jobs == ["worker", "ps"]
    assert spec.num_tasks("worker") == 3 and spec.num_tasks("ps") == 2
    assert spec.task_indices("worker") == [0, 1, 2]
    assert spec.task_address("ps", 1) == "ps1.example.com:2222"
    assert spec.job_tasks("worker") == TF_DOC_CLUSTER["worker"]
    assert spec.as_dict() == TF_DOC_CLUSTER
    assert bool(spec) and not ClusterSpec({})


def test_sparse_job_keeps_indices_and_fills_gaps_with_none():
    spec = ClusterSpec({"worker": {1: "w1:2222", 3: "w3:2222"}, "ps": ["ps0:2222"]})
    assert spec.num_tasks("worker") == 2
    assert spec.task_indices("worker") == [1, 3]
    assert spec.job_tasks("worker") == [None, "w1:2222", None, "w3:2222"]
    assert spec.as_dict() == {"worker": {1: "w1:2222", 3: "w3:2222"}, "ps": ["ps0:2222"]}


def test_string_indices_from_json_are_accepted_and_dense_dict_reads_as_list():
    spec = ClusterSpec({"worker": {"0": "w0:1", "1": "w1:1"}})
    assert spec.as_dict() == {"worker": ["w0:1", "w1:1"]}
    assert spec == ClusterSpec({"worker": ["w0:1", "w1:1"]})


def test_equality_copy_hash_and_repr():
    spec = ClusterSpec(TF_DOC_CLUSTER)
    copy = ClusterSpec(spec)
    assert copy == spec and hash(copy) == hash(spec)
    assert spec == TF_DOC_CLUSTER  # a dict in ClusterSpec's input format compares by content
    assert spec != ClusterSpec({"worker": TF_DOC_CLUSTER["worker"]})
    assert spec != "not a spec"
    assert repr(ClusterSpec({"worker": ["a:1"], "chief": ["c:1"]})) == "ClusterSpec({'chief': ['c:1'], 'worker': ['a:1']})"


def test_input_is_copied_and_spec_cannot_be_changed():
    source = {"worker": ["w0:1", "w1:1"]}
    spec = ClusterSpec(source)
    source["worker"].append("w2:1")
    source["ps"] = ["p:1"]
    assert spec.num_tasks("worker") == 2 and spec.jobs == ["worker"]
    spec.as_dict()["worker"].append("x:1")
    spec.job_tasks("worker").append("y:1")
    assert spec.job_tasks("worker") == ["w0:1", "w1:1"]
    with pytest.raises(AttributeError, match="immutable"):
        spec._jobs = {}


def test_duplicate_addresses_are_allowed_like_tf():
    spec = ClusterSpec({"worker": ["localhost:2222", "localhost:2222"]})
    assert spec.num_tasks("worker") == 2


def test_unknown_job_and_task_give_clear_errors():
    spec = ClusterSpec(TF_DOC_CLUSTER)
    with pytest.raises(ValueError, match=r"No such job in cluster: 'chief'.*jobs: \['worker', 'ps'\]"):
        spec.num_tasks("chief")
    with pytest.raises(ValueError, match=r"No task with index 5 in job 'worker'.*\[0, 1, 2\]"):
        spec.task_address("worker", 5)
    for query in (spec.task_indices, spec.job_tasks):
        with pytest.raises(ValueError, match="No such job"):
            query("evaluator")


@pytest.mark.parametrize("cluster, match", [
    (["w0:1"], "needs a dict"),
    ({"worker": "w0:1"}, "must be a list of addresses or a dict"),
    ({"worker": ["w0:1", 2222]}, r"Task 1 of job 'worker' has address 2222"),
    ({"worker": [None]}, "addresses must be strings"),
    ({3: ["w0:1"]}, "job names must be non-empty strings"),
    ({"worker": {"one": "w1:1"}}, "Task indices of job 'worker' must be integers"),
    ({"worker": {True: "w1:1"}}, "must be integers"),
])
def test_malformed_input_raises_type_error(cluster, match):
    with pytest.raises(TypeError, match=match):
        ClusterSpec(cluster)


def test_negative_task_index_raises_value_error():
    with pytest.raises(ValueError, match=r"must be >= 0; got -1"):
        ClusterSpec({"worker": {-1: "w:1"}})


def test_process_spec_defaults_are_a_local_single_process():
    spec = ProcessSpec()
    assert (spec.world_size, spec.rank, spec.launched, spec.source, spec.is_chief) == (1, 0, False, "local", True)
