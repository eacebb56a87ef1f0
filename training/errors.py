"""The error of a training run that cannot start or continue."""


class TrainError(RuntimeError):
    """A training run cannot start or continue (the message says why)."""
