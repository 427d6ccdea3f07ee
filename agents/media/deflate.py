"""The PNG deflate: which library and level compress a stream's bands, and what a dataset
manifest records of it.

The deflate of agents/media/png.PngStream's bands (``Deflate``: library, version, level):
``fast_deflate`` is ISA-L's where it is installed (as agents/models/images.encode_png,
which encodes one frame alone), else zlib's; ``reproducible_deflate`` is zlib-ng's (the
``zlib-ng`` package; the standard library's zlib when it cannot be imported), whose output
is a function of the input, the library's version and the level alone. ISA-L's is not: a fresh compressor now and then gave another valid
encoding of a band than a second fresh one given the same bytes right after it in the same
thread, about one process in ten on a loaded machine (the pixels are the same either way) -
so files whose bytes must repeat (dataset shards, whose SHA-256 the manifest records) use
zlib-ng. A band's bytes must also not depend on the bands compressed before it by the same
compressor (the recent-band cache and the frames kept by key hand them out again): after a
full flush zlib-ng's level 1 (deflate_quick) looks for a match only at the position the
cleared hash table names, inside the band, and clips a match at the band's end; its other
levels' match search clipped a match that reached the end of the input only from zlib-ng
2.3.3 on (its issue #2100: before, a later candidate could win by the stale bytes past the
end, left by a longer input before). tests/agents/datasets/test_dataset_writer.py compresses bands fresh and
after others, in several orders and after longer, shorter and random inputs, at every level.
``checksums`` (Adler-32 and CRC-32) are zlib-ng's, else ISA-L's, whatever the deflate: the
fastest, and the same numbers.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

try:
    from isal import isal_zlib as _z
except ImportError:  # pragma: no cover - an optional accelerator
    _z = zlib
try:
    from zlib_ng import zlib_ng as _zng
    _ZNG_ERROR = ""
except ImportError as e:  # pragma: no cover - a dependency; the standard library's zlib stands in
    _zng = None
    _ZNG_ERROR = str(e)
checksums = _zng if _zng is not None else _z    # adler32 and crc32 (the same numbers from each)

LEVELS = range(1, 10)                # deflate levels: 1 fastest (the default) ... 9 smallest
DEFAULT_LEVEL = 1


@dataclass(frozen=True)
class Deflate:
    """A deflate library and level, what a stream's bands are compressed with. ``module``
    has zlib's API (compressobj, Z_FULL_FLUSH); ``record()`` is what a dataset manifest
    says of it: two machines' shards have the same bytes when these are the same (and the
    same pixels whatever they are)."""

    library: str                     # "zlib-ng", "zlib" (the standard library's) or "isa-l"
    version: str                     # the compressing library's own version (zlib-ng's 2.3.3, not the wrapper's)
    level: int
    module: object = field(repr=False, compare=False)
    note: str = ""                   # why this one (a fallback)

    def __post_init__(self):
        # the zlib stream header the library itself writes at this level (FLEVEL differs)
        c = self.module.compressobj(self.level, self.module.DEFLATED, 15)
        object.__setattr__(self, "header", (c.compress(b"") + c.flush())[:2])

    def compressor(self):
        """A raw deflate compressor (no zlib header: the PNG stream writes its own)."""
        return self.module.compressobj(self.level, self.module.DEFLATED, -15)

    def record(self) -> dict:
        rec = {"library": self.library, "version": self.version, "level": self.level}
        if self.note:
            rec["note"] = self.note
        return rec


def check_level(level) -> int:
    """``level`` if it is a deflate level (LEVELS), else ValueError."""
    if isinstance(level, bool) or not isinstance(level, int) or level not in LEVELS:
        raise ValueError(f"the PNG deflate level is {LEVELS[0]} (fastest) to {LEVELS[-1]} (smallest), not {level!r}")
    return level


def reproducible_deflate(level: int = DEFAULT_LEVEL) -> Deflate:
    """The deflate whose bytes repeat (module doc): zlib-ng's, else the standard library's."""
    check_level(level)
    if _zng is not None:
        return Deflate("zlib-ng", getattr(_zng, "ZLIBNG_RUNTIME_VERSION", _zng.ZLIBNG_VERSION), level, _zng)
    why = f" ({_ZNG_ERROR})" if _ZNG_ERROR else ""
    return Deflate("zlib", zlib.ZLIB_RUNTIME_VERSION, level, zlib,
                   f"zlib-ng could not be imported{why}: the standard library's zlib deflated the PNGs")


def fast_deflate(level: int = DEFAULT_LEVEL) -> Deflate:
    """ISA-L's deflate (its levels are 0 to 3), else the standard library's zlib."""
    if _z is zlib:  # pragma: no cover - without ISA-L
        return Deflate("zlib", zlib.ZLIB_RUNTIME_VERSION, level, zlib)
    import isal
    return Deflate("isa-l", str(getattr(isal, "ISAL_VERSION", isal.__version__)), level, _z)
