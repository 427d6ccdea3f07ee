"""Shard files: writing rows (schema.py) in a standard format, and reading them back.

    parquet      one Parquet file per shard (pyarrow): a column per field, the frame a
                 lossless PNG in the binary column ``image`` (stored as is: PNG is already
                 deflated; each distinct PNG once per row group, in the column's dictionary;
                 the other columns snappy-compressed), row groups of ROW_GROUP rows.
                 Read with pyarrow.parquet, pandas, polars, DuckDB, Hugging Face datasets.
    webdataset   one uncompressed tar per shard, as WebDataset reads it: per sample
                 ``<key>.png`` (the frame) and ``<key>.json`` (every other column), in row
                 order. Read with webdataset, or tarfile and json from the standard library.

Shards are byte-for-byte reproducible: the same rows give the same file (tar members carry
no time or owner; Parquet's own metadata only names the pyarrow version), so a shard's
SHA-256 in the manifest identifies its content.
"""

from __future__ import annotations

import hashlib
import json
import os
import tarfile
from pathlib import Path
from collections.abc import Iterator

from longpuzzle.agents.datasets.columns import column, record_arrays
from longpuzzle.agents.datasets.schema import COLUMNS, META_COLUMNS
from longpuzzle.engine.errors import LongPuzzleError

FORMATS = ("parquet", "webdataset")
EXTENSIONS = {"parquet": ".parquet", "webdataset": ".tar"}
# a row group's rows: the image column's dictionary is one per row group, so the PNGs of the
# frames a job shows again (the same positions in its other episodes, actions without effect)
# are stored once per row group - 1,024 rows of a Maze Paint job are about 5 MB against 8.9 in
# 256-row groups, and the smaller file is faster to encode, hash and write (~36 against ~47 us
# a row); 2,048 rows hold a default shard (DEFAULT_SHARD_SIZE, 2,000 rows) in one row group,
# and ten-episode jobs of more than 1,024 rows were 15 to 41% smaller than in 1,024-row groups
# (Rush Hour hard 8.6 against 14.5 MB, Bolt Unscrew hard 65.3 against 80.1); a row group also
# ends at ROW_GROUP_BYTES of distinct PNGs, which bounds what is held to write it
ROW_GROUP = 2048
ROW_GROUP_BYTES = 64 << 20
# rows decoded at a time when a shard is read (read_rows): a row group's dictionary holds its
# distinct PNGs once, the rows decoded from it a PNG each, so a reader holds the dictionary
# and this many rows' PNGs, whatever the row group's length
READ_BATCH = 256
# json.dumps(v, separators=(",", ":")), one encoder for every call (dumps makes one a call)
compact_json = json.JSONEncoder(separators=(",", ":")).encode


class DatasetError(LongPuzzleError, ValueError):
    """A dataset problem a user can act on (bad option, unreadable or altered shard)."""


def check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise DatasetError(f"unknown format {fmt!r}: use {' or '.join(FORMATS)}")
    if fmt == "parquet":
        _pyarrow()
    return fmt


def _pyarrow():
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise DatasetError("the parquet format needs pyarrow, a dependency of longpuzzle (pip install pyarrow); "
                           "--format webdataset needs nothing more") from None
    return pyarrow


def file_sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


class _HashedFile:
    """A file written once from start to end that hashes its bytes (SHA-256) as they are
    written, while they are still in the CPU's caches: the shard's digest without reading
    the file back (the tar shards', which this module writes itself)."""

    def __init__(self, path: Path):
        self._f = open(path, "wb")  # noqa: SIM115 - the object owns the file (close())
        self._h = hashlib.sha256()
        self.size = 0
        self.closed = False

    def write(self, data) -> int:
        self._h.update(data)
        n = self._f.write(data)
        self.size += n
        return n

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._f.close()

    def hexdigest(self) -> str:
        return self._h.hexdigest()


class ShardWriter:
    """Writes rows to one shard file: ``add(row)`` then ``close()`` -> its manifest entry
    (file name, rows, bytes, sha256). The file is written under a temporary name and
    renamed when complete, so a shard that exists is whole."""

    ext = ""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.tmp = self.path.with_name(self.path.name + ".part")
        self.rows = 0
        self._f = self._open()                   # every byte of the shard goes through it

    def _open(self):
        """The file the shard is written to, under its temporary name."""
        return _HashedFile(self.tmp)

    def add(self, row: dict) -> None:
        raise NotImplementedError

    def _finish(self) -> None:
        raise NotImplementedError

    def _digest(self) -> tuple[int, str]:
        """(bytes, SHA-256) of the shard written and closed."""
        return self._f.size, self._f.hexdigest()

    def close(self) -> dict:
        self._finish()
        self._f.close()
        size, sha = self._digest()
        os.replace(self.tmp, self.path)
        return {"file": self.path.name, "rows": self.rows, "bytes": size, "sha256": sha}


def _arrow_type(pa, t: str):
    t = t.rstrip("?")
    return {"str": pa.string(), "int32": pa.int32(), "float64": pa.float64(), "bool": pa.bool_(),
            "binary": pa.binary(), "list<str>": pa.list_(pa.string()), "list<int32>": pa.list_(pa.int32())}[t]


def arrow_schema(cols: dict = COLUMNS):
    """The Parquet shards' Arrow schema (nullable exactly where the type ends in '?');
    ``cols``: the dataset's columns (schema.columns)."""
    pa = _pyarrow()
    return pa.schema([pa.field(k, _arrow_type(pa, t), nullable=t.endswith("?")) for k, (t, _) in cols.items()])


class ParquetShard(ShardWriter):
    """A Parquet shard. The image column is handed to pyarrow dictionary-encoded, as the
    Parquet file stores it: the row group's distinct PNGs once (compared with those of the
    same size) and each row's index among them, so pyarrow does not copy a repeated PNG
    into the batch nor hash every PNG to find the repeats. The file's schema is the plain one
    (``arrow_schema``; pyarrow's own copy of the Arrow schema is not stored, so that readers
    see the column as binary, not as the dictionary type it was written from).

    pyarrow writes the file itself (a native file: the bytes of its pages go from its buffers
    to the file, with no copy into Python objects), and the SHA-256 is read back from the
    file once it is closed. (Passing them through a Python file object that hashes them as
    they go copied each write into a bytes object first; the read-back costs about as much:
    benchmarks' test_shard_file reads 0.9x to 1.0x in the best rounds, 1.2x to 2.0x in the
    median ones.)"""

    ext = ".parquet"

    def __init__(self, path, cols: dict = COLUMNS):
        pa = _pyarrow()
        self._pa = pa
        self._names = tuple(cols)
        super().__init__(path)
        import pyarrow.parquet as pq
        self.schema = arrow_schema(cols)
        self._image = self.schema.get_field_index("image")
        self._write_schema = self.schema.set(self._image, pa.field("image", pa.dictionary(pa.int32(), pa.binary()),
                                                                   nullable=False))
        comp = {k: ("none" if k == "image" else "snappy") for k in cols}
        self._w = pq.ParquetWriter(self._f, self._write_schema, compression=comp, write_statistics=False,
                                   store_schema=False)
        self._new_group()

    def _open(self):
        return self._pa.OSFile(str(self.tmp), "wb")

    def _digest(self) -> tuple[int, str]:
        return self.tmp.stat().st_size, file_sha256(self.tmp)

    def _new_group(self):
        self._cols: dict[str, list] = {k: [] for k in self._names if k != "image"}
        self._pngs: list[bytes] = []                  # the row group's distinct PNGs, in order
        self._by_size: dict[int, list] = {}           # a PNG's length -> the indices of those PNGs there
        self._picks: list[int] = []                   # each row's PNG, by that index
        self._bytes = 0                               # the bytes of those PNGs

    def add(self, row):
        cols = self._cols
        for k, v in cols.items():
            v.append(row[k])
        png = row["image"]
        pngs = self._pngs
        same_size = self._by_size.setdefault(len(png), [])
        # the same PNG is mostly the same object (no bytes compared); others of its size
        # mostly differ in their first band (pyarrow writes a dictionary that holds a value
        # twice as plain values: every PNG of the row group in full)
        i = next((j for j in same_size if pngs[j] == png), None)
        if i is None:
            i = len(pngs)
            same_size.append(i)
            pngs.append(png)
            self._bytes += len(png)
        self._picks.append(i)
        self.rows += 1
        if len(self._picks) >= ROW_GROUP or self._bytes >= ROW_GROUP_BYTES:
            self._flush()

    def _flush(self):
        if self._picks:
            pa = self._pa
            arrays = record_arrays(pa, self.schema, self._cols, skip=("image",))
            arrays.insert(self._image, pa.DictionaryArray.from_arrays(
                column(pa, pa.int32(), self._picks), column(pa, pa.binary(), self._pngs)))
            self._w.write_batch(pa.RecordBatch.from_arrays(arrays, schema=self._write_schema))
            self._new_group()

    def _finish(self):
        self._flush()
        self._w.close()                               # (the file is closed after: close())


class WebDatasetShard(ShardWriter):
    """The tar written directly: per member a USTAR header (mode 0644, owner 0, no time, the
    bytes tarfile writes for such a member, tested) and the data padded to 512-byte blocks;
    at the end two zero blocks and zeros up to tarfile's 10 KiB record."""

    ext = ".tar"

    def __init__(self, path, cols: dict = COLUMNS):
        super().__init__(path)
        self._size = 0
        self._meta = META_COLUMNS if cols is COLUMNS else tuple(c for c in cols if c != "image")

    def _member(self, name: str, data: bytes) -> None:
        n = len(data)
        pad = -n % BLOCK
        self._f.write(ustar_header(name, n))
        self._f.write(data)
        if pad:
            self._f.write(bytes(pad))
        self._size += BLOCK + n + pad

    def add(self, row):
        key = row["key"]
        self._member(f"{key}.png", row["image"])
        meta = {k: row[k] for k in self._meta}
        self._member(f"{key}.json", compact_json(meta).encode())
        self.rows += 1

    def _finish(self):
        end = self._size + 2 * BLOCK
        self._f.write(bytes(2 * BLOCK + (-end % RECORD)))


BLOCK, RECORD = 512, 20 * 512                 # tar blocks; tarfile's record (RECORDSIZE)
_HEAD = (b"0000644\0" b"0000000\0" b"0000000\0")            # mode, uid, gid
_MID = b"00000000000\0" + b" " * 8 + b"0" + bytes(100) + b"ustar\x0000" + bytes(80)
# (mtime 0, the checksum's place as spaces, a regular file, no link; owner names and device
# numbers empty, as tarfile leaves them for a regular file)


def ustar_header(name: str, size: int) -> bytes:
    """The 512-byte USTAR header of a regular file ``name`` (under 100 bytes) of ``size``
    bytes, mode 0644, owner 0, mtime 0: what tarfile.TarInfo.tobuf(USTAR_FORMAT) gives."""
    nb = name.encode("utf-8")
    if len(nb) >= 100 or size >= 8 ** 11:
        raise DatasetError(f"a tar member name under 100 bytes and a size under 8 GiB: {name!r}")
    head = nb + bytes(100 - len(nb)) + _HEAD + b"%011o\0" % size + _MID
    head += bytes(BLOCK - len(head))
    return head[:148] + b"%06o\0 " % sum(head) + head[156:]


def open_shard(fmt: str, path: str | Path, cols: dict = COLUMNS) -> ShardWriter:
    """A shard writer of ``fmt`` for rows of the columns ``cols`` (schema.columns)."""
    return ParquetShard(path, cols) if fmt == "parquet" else WebDatasetShard(path, cols)


def read_rows(path: str | Path) -> Iterator[dict]:
    """Every row of a shard (either format, by its extension), in order, as dicts of the
    schema's columns (``image``: the PNG bytes)."""
    path = Path(path)
    if path.suffix == ".parquet":
        _pyarrow()
        import pyarrow.parquet as pq
        try:
            pf = pq.ParquetFile(path)
            for batch in pf.iter_batches(batch_size=READ_BATCH):
                yield from batch.to_pylist()
        except (OSError, ValueError) as e:          # ArrowInvalid is a ValueError
            raise DatasetError(f"{path.name}: not a readable Parquet shard ({e})") from None
        return
    if path.suffix == ".tar":
        try:
            with tarfile.open(path, "r:") as tar:
                pending: dict[str, dict] = {}
                for m in tar:
                    key, _, ext = m.name.partition(".")
                    data = tar.extractfile(m).read() if m.isfile() else b""
                    d = pending.setdefault(key, {})
                    if ext == "png":
                        d["image"] = data
                    elif ext == "json":
                        d.update(json.loads(data))
                    if "image" in d and "key" in d:
                        yield pending.pop(key)
                if pending:
                    raise DatasetError(f"{path.name}: samples without both a .png and a .json: "
                                       f"{', '.join(sorted(pending)[:3])}")
        except (tarfile.TarError, json.JSONDecodeError, UnicodeDecodeError) as e:
            raise DatasetError(f"{path.name}: not a readable WebDataset shard ({e})") from None
        return
    raise DatasetError(f"{path.name}: not a shard (.parquet or .tar)")
