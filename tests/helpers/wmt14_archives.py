"""WMT'14 En-Fr as a user downloads it, made small: the archives of `corpus_registry.WMT14_ENFR`
(training-parallel-{europarl-v7,nc-v9,un,commoncrawl}.tgz, training-giga-fren.tar, dev.tgz, test-full.tgz),
each file at the registry's member path, in its published form (giga-fren's members gzip, newstest2014 WMT
SGML), holding the lines a test gives. Written at test time into a temporary folder; no corpus is committed."""

import gzip
import io
import tarfile

from data_pipeline import corpus_registry
from data_pipeline import data_files


def sgml_document(lines, language):
    """`lines` as a WMT test set in SGML, as test-full.tgz has them: one `<seg id="N">` per line."""
    kind = "srcset" if language == "en" else "refset"
    segments = "".join(f'<seg id="{number}">{line}</seg>\n' for number, line in enumerate(lines, start=1))
    return (f'<{kind} setid="newstest2014" srclang="any" trglang="fr">\n'
            f'<doc sysid="ref" docid="fixture" genre="news" origlang="en">\n<p>\n{segments}</p>\n</doc>\n</{kind}>\n')


def member_bytes(corpus_file, lines):
    """The bytes of `corpus_file`'s archive member holding `lines`: text, SGML or gzip as its name says."""
    if corpus_file.sgml:
        text = sgml_document(lines, "en" if corpus_file.path.endswith(".en.gz") else "fr")
    else:
        text = "".join(f"{line}\n" for line in lines)
    data = text.encode("utf-8")
    return gzip.compress(data) if corpus_file.member.endswith(".gz") else data


def corpus_files(corpus=corpus_registry.WMT14_ENFR):
    """Every file of `corpus`, split by split, part by part, source before target."""
    return [corpus_file for parts in corpus.splits.values() for part in parts for corpus_file in part.files]


def write_wmt14_archives(folder, lines_of, corpus=corpus_registry.WMT14_ENFR):
    """Writes the archives of `corpus` into `folder`, each member holding `lines_of(corpus_file)`.

    Returns:
        {archive file name: its path}, e.g. "dev.tgz": folder / "dev.tgz".
    """
    members = {}
    for corpus_file in corpus_files(corpus):
        name = data_files.archive_name(corpus_file)
        members.setdefault(name, {})[corpus_file.member] = member_bytes(corpus_file, lines_of(corpus_file))
    folder.mkdir(parents=True, exist_ok=True)
    for name, files in members.items():
        with tarfile.open(folder / name, "w:gz" if name.endswith(".tgz") else "w") as archive:
            for member, data in files.items():
                info = tarfile.TarInfo(member)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    return {name: folder / name for name in members}
