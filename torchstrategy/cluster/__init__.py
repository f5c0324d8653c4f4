"""Where this process sits in a job: ProcessSpec/ClusterSpec and the resolvers that read them from
torchrun, TF_CONFIG, SLURM or the local TPU. The only package that reads os.environ."""
from torchstrategy.cluster.base import ClusterResolver
from torchstrategy.cluster.resolvers import (SimpleClusterResolver, TFConfigClusterResolver,
                                             TorchElasticClusterResolver, TorchrunClusterResolver, declare_job,
                                             detect,
                                             process_spec)
from torchstrategy.cluster.slurm import SlurmClusterResolver, expand_hostlist, expand_tasks_per_node
from torchstrategy.cluster.spec import ClusterSpec, ProcessSpec
from torchstrategy.cluster.tpu import TPUClusterResolver

__all__ = [
    "ClusterResolver", "ClusterSpec", "ProcessSpec", "SimpleClusterResolver", "SlurmClusterResolver",
    "TFConfigClusterResolver", "TPUClusterResolver", "TorchElasticClusterResolver", "TorchrunClusterResolver", "declare_job", "detect",
    "expand_hostlist", "expand_tasks_per_node", "process_spec",
]
