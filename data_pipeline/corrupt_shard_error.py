"""The error raised when a shard does not match the checksum `metadata.json` recorded for it."""


class CorruptShardError(ValueError):
    """A shard does not match the checksum `metadata.json` recorded for it; the message names the shard."""
