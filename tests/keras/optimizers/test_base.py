"""keras/optimizers/base.py: building an optimizer from replica threads that reach it together."""
from __future__ import annotations

import torch


def test_replica_threads_reaching_the_first_apply_together_build_the_optimizer_once():
    # CentralStorageStrategy / local MirroredStrategy replicas are threads of one process: their custom loop's
    # first apply_gradients arrives together; both used to build, and torch refused the second param group
    import threading

    from torchstrategy import keras

    for _ in range(20):
        variables = [torch.nn.Parameter(torch.ones(3)), torch.nn.Parameter(torch.zeros(2))]
        optimizer = keras.optimizers.Adam(0.1)
        start, errors = threading.Barrier(2), []

        def apply():
            start.wait()
            try:
                optimizer.apply_gradients(zip([torch.ones(3), torch.ones(2)], variables))
            except Exception as error:  # noqa: BLE001 - reported below
                errors.append(error)

        threads = [threading.Thread(target=apply) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not errors, errors
        assert len(optimizer.param_groups) == 1 and len(optimizer.param_groups[0]["params"]) == 2
        assert int(optimizer.iterations) == 2
