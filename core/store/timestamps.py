"""Stored timestamps that Python cannot hold, brought within its range so their rows can still be read.

Arrow's ``timestamp[us]`` reaches far beyond Python's ``datetime`` (years 1–9999). Before tool arguments
were checked in UTC, ``kg_edit`` could store ``9999-12-31T23:59:59-05:00``, which is year 10000 in UTC; turning
that row into Python objects fails, and with it every read of the table. Such values are read as the nearest
time Python holds instead (9999-12-31T23:59:59.999999 or 0001-01-01T00:00:00 UTC), so the row shows and the
fact can be ended.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

#: Python's first and last representable instants, in seconds from the Unix epoch (UTC).
_FIRST_SECOND = -62_135_596_800
_LAST_SECOND = 253_402_300_799
_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
_INT64 = (-(2**63), 2**63 - 1)


def clamp_timestamps(table: pa.Table) -> pa.Table:
    """``table`` with every top-level timestamp outside years 1–9999 (UTC) replaced by the nearest one inside.

    Nulls stay null; other columns are untouched.
    """
    for index, field in enumerate(table.schema):
        if not pa.types.is_timestamp(field.type):
            continue
        per_second = _PER_SECOND[field.type.unit]
        low = pa.scalar(max(_FIRST_SECOND * per_second, _INT64[0]), pa.int64())
        high = pa.scalar(min((_LAST_SECOND + 1) * per_second - 1, _INT64[1]), pa.int64())
        ticks = table.column(index).cast(pa.int64())
        inside = pc.min_element_wise(pc.max_element_wise(ticks, low, skip_nulls=False), high, skip_nulls=False)
        table = table.set_column(index, field, inside.cast(field.type))
    return table
