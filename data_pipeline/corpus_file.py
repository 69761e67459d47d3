"""One file of a corpus: where it lives under the data folder and where it is published."""

import dataclasses
from typing import Optional


@dataclasses.dataclass(frozen=True)
class CorpusFile:
    """A text file (plain or gzip), located relative to the data folder, downloadable when missing.

    Args:
        path: path under the data folder (`RNNSEARCH_DATA`), or an absolute path for a user's own file.
        url: official download URL, or None when the file cannot be downloaded.
        member: the file's name inside the archive at `url` (`.tgz`, `.tar.gz` or `.zip`); None when
            `url` is the file itself.
        sgml: True when the published file is WMT SGML (`<seg id="1">text</seg>`): only the segments
            are kept, one per line.
    """

    path: str
    url: Optional[str] = None
    member: Optional[str] = None
    sgml: bool = False
