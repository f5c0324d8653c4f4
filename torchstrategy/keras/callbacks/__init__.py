"""keras.callbacks: Callback, CallbackList, History, ProgbarLogger, EarlyStopping, ReduceLROnPlateau,
LearningRateScheduler, CSVLogger, ModelCheckpoint, TerminateOnNaN, LambdaCallback, TensorBoard (and Progbar)."""
from torchstrategy.keras.callbacks.backup_and_restore import BackupAndRestore
from torchstrategy.keras.callbacks.base import Callback, History
from torchstrategy.keras.callbacks.callback_list import CallbackList
from torchstrategy.keras.callbacks.loggers import CSVLogger, LambdaCallback
from torchstrategy.keras.callbacks.model_checkpoint import ModelCheckpoint
from torchstrategy.keras.callbacks.orbax_checkpoint import OrbaxCheckpoint
from torchstrategy.keras.callbacks.monitoring import EarlyStopping, ReduceLROnPlateau, TerminateOnNaN
from torchstrategy.keras.callbacks.progbar import Progbar, ProgbarLogger
from torchstrategy.keras.callbacks.schedule import LearningRateScheduler
from torchstrategy.keras.callbacks.tensorboard import TensorBoard
from torchstrategy.keras.callbacks.swap_ema_weights import SwapEMAWeights
from torchstrategy.keras.callbacks.remote_monitor import RemoteMonitor

__all__ = [
    "BackupAndRestore",
    "CSVLogger",
    "Callback",
    "CallbackList",
    "EarlyStopping",
    "History",
    "LambdaCallback",
    "LearningRateScheduler",
    "ModelCheckpoint",
    "Progbar",
    "ProgbarLogger",
    "ReduceLROnPlateau",
    "TensorBoard",
    "TerminateOnNaN",
]
__all__ += ["SwapEMAWeights", "RemoteMonitor", "OrbaxCheckpoint"]
