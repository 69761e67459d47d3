"""The error raised when a corpus file is neither in the data folder nor downloadable."""


class MissingDataError(FileNotFoundError):
    """A corpus file is neither in the data folder nor downloadable; the message names the path expected."""
