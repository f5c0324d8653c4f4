"""File formats of other libraries, read and written here: TF's tensor-bundle checkpoints (`tf_bundle`)
and their object graph (`tf_object_graph`)."""
