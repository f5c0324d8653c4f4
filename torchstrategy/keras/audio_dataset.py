"""`keras.utils.audio_dataset_from_directory`: a Dataset of `(audio, label)` batches from class folders of WAV
files, decoded by tf.audio.decode_wav; files, labels and splits are chosen as image_dataset_from_directory's."""
from __future__ import annotations

from typing import Any, Optional, Sequence

from torchstrategy import audio as tf_audio
from torchstrategy.data.dataset import Dataset
from torchstrategy.keras.dataset_utils import _build

AUDIO_FORMATS = (".wav",)


def _check_audio_arguments(sampling_rate: Any, output_sequence_length: Any, ragged: bool) -> None:
    if ragged and output_sequence_length is not None:
        raise ValueError("Cannot set both `ragged` and `output_sequence_length`")
    if output_sequence_length is not None and (isinstance(output_sequence_length, bool)
                                               or not isinstance(output_sequence_length, int)
                                               or output_sequence_length < 1):
        raise ValueError(f"`output_sequence_length` must be a positive integer or None, got "
                         f"{output_sequence_length!r}.")
    if sampling_rate is not None:
        if not isinstance(sampling_rate, int):
            raise ValueError(f"`sampling_rate` should have an integer value. Received: sampling_rate={sampling_rate}")
        if sampling_rate <= 0:
            raise ValueError(f"`sampling_rate` should be higher than 0. Received: sampling_rate={sampling_rate}")
        raise NotImplementedError("audio_dataset_from_directory(sampling_rate=...) resamples with tensorflow-io in "
                                  "Keras, which torchstrategy does not provide; resample the WAV files beforehand "
                                  "and pass sampling_rate=None.")


def _batched(dataset: Dataset, batch_size: Optional[int], output_sequence_length: Optional[int],
             ragged: bool) -> Dataset:
    """Batches as Keras does: zero-padded to the longest clip, fixed-length, or ragged; keeps the metadata."""
    if batch_size is not None:
        names, paths = dataset.class_names, dataset.file_paths
        if ragged:
            dataset = dataset.ragged_batch(batch_size)
        elif output_sequence_length is None:
            dataset = dataset.padded_batch(batch_size)
        else:
            dataset = dataset.batch(batch_size)
        dataset.class_names, dataset.file_paths = names, paths
    return dataset


def audio_dataset_from_directory(directory: Any, labels: Any = "inferred", label_mode: Optional[str] = "int",
                                 class_names: Optional[Sequence[str]] = None, batch_size: Optional[int] = 32,
                                 sampling_rate: Optional[int] = None, output_sequence_length: Optional[int] = None,
                                 ragged: bool = False, shuffle: bool = True, seed: Optional[int] = None,
                                 validation_split: Optional[float] = None, subset: Optional[str] = None,
                                 follow_links: bool = False, verbose: bool = True) -> Any:
    """A Dataset of `(audio, label)` batches from `directory/<class>/*.wav` (16-bit PCM), like Keras's.

    Each clip is float32 `(samples, channels)`: cut or zero-padded to `output_sequence_length`, else a batch
    is zero-padded to its longest clip (or, with `ragged=True`, batched as a RaggedTensor). Labels, class
    order, shuffling and `validation_split` / `subset` ('training', 'validation' or 'both') follow
    image_dataset_from_directory. `sampling_rate` needs tensorflow-io in Keras and is not supported here.

        >>> train, val = audio_dataset_from_directory(  # doctest: +SKIP
        ...     "speech/", validation_split=0.2, subset="both", seed=1, output_sequence_length=16000)
    """
    _check_audio_arguments(sampling_rate, output_sequence_length, ragged)
    desired = -1 if output_sequence_length is None else int(output_sequence_length)

    def load(path: str) -> Any:
        with open(path, "rb") as handle:
            return tf_audio.decode_wav(handle.read(), desired_samples=desired).audio

    built = _build(directory, labels, label_mode, class_names, AUDIO_FORMATS, "audio", load, batch_size, shuffle,
                   seed, validation_split, subset, follow_links, verbose, batch_elements=False)
    if isinstance(built, list):
        return [_batched(part, batch_size, output_sequence_length, ragged) for part in built]
    return _batched(built, batch_size, output_sequence_length, ragged)
