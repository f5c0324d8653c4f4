"""tf.summary tracing on torch: the profiler part writes a trace under profiler_outdir; no graph is recorded."""
from __future__ import annotations

import glob
import os
import warnings

import pytest
import torch

import torchstrategy as tf


def test_trace_with_profiler_writes_a_profile_and_trace_off_discards(tmp_path):
    outdir = str(tmp_path / "profile")
    tf.summary.trace_on(graph=True, profiler=True, profiler_outdir=outdir)
    with pytest.warns(UserWarning, match="already on"):
        tf.summary.trace_on()
    torch.ones(8, 8) @ torch.ones(8, 8)
    tf.summary.trace_export("trace", step=0)
    assert glob.glob(os.path.join(outdir, "plugins", "profile", "*", "*.json*"))
    with pytest.raises(ValueError, match="trace_on"):
        tf.summary.trace_export("again", step=0)
    discarded = str(tmp_path / "discarded")
    tf.summary.trace_on(profiler=True, profiler_outdir=discarded)
    tf.summary.trace_off()
    assert not glob.glob(os.path.join(discarded, "plugins", "profile", "*", "*"))
    tf.summary.trace_off()  # nothing on: nothing to do


def test_trace_without_outdir_warns_and_records_no_profile():
    with pytest.warns(UserWarning, match="profiler_outdir"):
        tf.summary.trace_on(profiler=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tf.summary.trace_export("t", step=1)
