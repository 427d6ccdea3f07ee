"""A row group's Arrow columns, built from the rows' Python values straight into Arrow buffers.

pyarrow's own converters (``pa.array``, ``Table.from_pydict``) first ask whether a value is a
pandas object, and that question imports pandas wherever it is installed: about 0.45 CPU s
in each dataset job's process, more than the rest of a short job's Parquet work. The columns
here are assembled with ``pa.Array.from_buffers`` (validity bitmap, offsets, data), which asks
nothing, from the same values: the arrays are equal to pyarrow's, and so are the Parquet
bytes written from them (tested against ``Table.from_pydict``).

Types are schema.COLUMNS' names: str, binary, int32, float64, bool, list<str>, list<int32>;
a trailing "?" allows None (a null).
"""

from __future__ import annotations

from itertools import chain

import numpy as np

_OFFSET_MAX = (1 << 31) - 1      # int32 offsets of string / binary / list arrays


def _validity(pa, values: list):
    """(bitmap buffer or None, null count): bit i (least significant first) is 1 where
    values[i] is not None."""
    nulls = values.count(None)
    if not nulls:
        return None, 0
    valid = np.fromiter((v is not None for v in values), dtype=bool, count=len(values))
    return pa.py_buffer(np.packbits(valid, bitorder="little")), nulls


def _offsets(items: list) -> np.ndarray:
    """int32 offsets (n + 1,) of these n items (by their lengths)."""
    out = np.zeros(len(items) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, items), dtype=np.int64, count=len(items)), out=out[1:])
    if out[-1] > _OFFSET_MAX:
        raise OverflowError(f"a column of {out[-1]} bytes does not fit 32-bit Arrow offsets")
    return out.astype(np.int32)


def _bytes_array(pa, typ, items: list, validity, nulls):
    """A string or binary array of these items (bytes, or str encoded as UTF-8; None for a
    null, stored as an empty item)."""
    text_type = pa.types.is_string(typ)
    if nulls:
        empty = "" if text_type else b""
        items = [empty if v is None else v for v in items]
    if text_type:
        text = "".join(items)
        data = text.encode()
        if len(data) != len(text):              # not all ASCII: lengths in bytes, item by item
            items = [v.encode() for v in items]
    else:
        data = b"".join(items)
    return pa.Array.from_buffers(typ, len(items), [validity, pa.py_buffer(_offsets(items)),
                                                   pa.py_buffer(data)], null_count=nulls)


def column(pa, typ, values: list):
    """The Arrow array of one column's values (typ a pyarrow DataType of the kinds above)."""
    n = len(values)
    validity, nulls = _validity(pa, values)
    if pa.types.is_string(typ) or pa.types.is_binary(typ):
        return _bytes_array(pa, typ, values, validity, nulls)
    if nulls:
        values = [0 if v is None else v for v in values]
    if pa.types.is_boolean(typ):
        bits = np.array(values, dtype=bool)
        return pa.Array.from_buffers(typ, n, [validity, pa.py_buffer(np.packbits(bits, bitorder="little"))],
                                     null_count=nulls)
    if pa.types.is_int32(typ) or pa.types.is_float64(typ):
        data = np.array(values, dtype=np.int32 if pa.types.is_int32(typ) else np.float64)
        return pa.Array.from_buffers(typ, n, [validity, pa.py_buffer(data)], null_count=nulls)
    if pa.types.is_list(typ):
        if nulls:
            raise ValueError("list columns hold no nulls")
        child = column(pa, typ.value_type, list(chain.from_iterable(values)))
        return pa.Array.from_buffers(typ, n, [None, pa.py_buffer(_offsets(values))],
                                     children=[child])
    raise TypeError(f"no column builder for {typ}")


def record_arrays(pa, schema, cols: dict[str, list], skip=()) -> list:
    """The arrays of the schema's columns but ``skip``, cols[name] the column's values in
    row order."""
    return [column(pa, f.type, cols[f.name]) for f in schema if f.name not in skip]


def record_batch(pa, schema, cols: dict[str, list]):
    """A record batch of the schema's columns, cols[name] the column's values in row order."""
    return pa.RecordBatch.from_arrays(record_arrays(pa, schema, cols), schema=schema)
