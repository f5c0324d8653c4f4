"""keras.callbacks: Callback, CallbackList, History, ProgbarLogger, EarlyStopping, ReduceLROnPlateau,
LearningRateScheduler, CSVLogger, TerminateOnNaN, LambdaCallback, TensorBoard (and Progbar)."""
from torchstrategy.keras.callbacks.base import Callback, History
from torchstrategy.keras.callbacks.callback_list import CallbackList
from torchstrategy.keras.callbacks.loggers import CSVLogger, LambdaCallback
from torchstrategy.keras.callbacks.monitoring import EarlyStopping, ReduceLROnPlateau, TerminateOnNaN
from torchstrategy.keras.callbacks.progbar import Progbar, ProgbarLogger
from torchstrategy.keras.callbacks.schedule import LearningRateScheduler
from torchstrategy.keras.callbacks.tensorboard import TensorBoard

__all__ = [
    "CSVLogger",
    "Callback",
    "CallbackList",
    "EarlyStopping",
    "History",
    "LambdaCallback",
    "LearningRateScheduler",
    "Progbar",
    "ProgbarLogger",
    "ReduceLROnPlateau",
    "TensorBoard",
    "TerminateOnNaN",
]
