"""Machinery under the TF namespaces, with no TF names of its own: lazy namespaces, the protobuf wire format,
FarmHash, host-memory reuse and the hand-written CPU kernels (torch.library ops) with their build."""
