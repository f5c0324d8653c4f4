"""`tf.summary`: TensorBoard summaries written to event files (writers, scalar/histogram/image/text/audio,
steps, record_if, tracing); the names load from the package's modules on first use."""
from __future__ import annotations

from torchstrategy._machinery.lazy import lazy_namespace

__getattr__, __dir__ = lazy_namespace(__name__, {
    "SummaryWriter": "torchstrategy.summary.writer:SummaryWriter",
    "create_file_writer": "torchstrategy.summary.writer:create_file_writer",
    "create_noop_writer": "torchstrategy.summary.writer:create_noop_writer",
    "flush": "torchstrategy.summary.writer:flush",
    "record_if": "torchstrategy.summary.writer:record_if",
    "should_record_summaries": "torchstrategy.summary.writer:should_record_summaries",
    "write": "torchstrategy.summary.writer:write",
    "scalar": "torchstrategy.summary.ops:scalar",
    "histogram": "torchstrategy.summary.ops:histogram",
    "image": "torchstrategy.summary.ops:image",
    "text": "torchstrategy.summary.ops:text",
    "audio": "torchstrategy.summary.ops:audio",
    "graph": "torchstrategy.summary.ops:graph",
    "trace_on": "torchstrategy.summary.trace:trace_on",
    "trace_off": "torchstrategy.summary.trace:trace_off",
    "trace_export": "torchstrategy.summary.trace:trace_export",
    "experimental": "torchstrategy.summary.experimental",
})
