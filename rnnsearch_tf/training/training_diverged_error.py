"""The error raised when too many consecutive updates had a non-finite loss or gradient."""


class TrainingDivergedError(RuntimeError):
    """Too many consecutive updates had a non-finite loss or gradient."""
