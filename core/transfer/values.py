"""Table rows as JSON and back, driven by the table's Arrow schema, so a column added later travels unchanged.

Times are ISO 8601 in UTC (``2026-01-02T03:04:05.000006Z``), bytes base64; every other value is the JSON value
Arrow gives for it. Reading back converts each value by its column's type, so what was written is what is read.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, date, datetime
from typing import Any

import pyarrow as pa

from ..errors import TransferRefused
from ..store.timestamps import clamp_timestamps

#: Rows converted to Python at a time while writing (a whole 100,000-row table would be held twice).
BATCH_ROWS = 2000


def iso_utc(value: datetime) -> str:
    """``value`` as ISO 8601 in UTC with microseconds and a ``Z``."""
    aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    return aware.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _to_json(value: Any) -> Any:
    if isinstance(value, datetime):
        return iso_utc(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, list):
        return [_to_json(v) for v in value]
    if isinstance(value, dict):
        return {k: _to_json(v) for k, v in value.items()}
    return value


def json_rows(table: pa.Table) -> Iterator[dict[str, Any]]:
    """Every row of ``table`` as a JSON-ready dict, in the table's order and column order.

    A time outside years 1–9999 (which only an older Engram could store) is written as the nearest one inside.
    """
    for batch in clamp_timestamps(table).to_batches(max_chunksize=BATCH_ROWS):
        for row in batch.to_pylist():
            yield {k: _to_json(v) for k, v in row.items()}


def _needs_conversion(kind: pa.DataType) -> bool:
    """Whether JSON values of type ``kind`` must be converted before Arrow takes them (times, dates, bytes)."""
    if pa.types.is_timestamp(kind) or pa.types.is_date(kind) or pa.types.is_binary(kind) \
            or pa.types.is_large_binary(kind) or pa.types.is_fixed_size_binary(kind):
        return True
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return _needs_conversion(kind.value_type)
    if pa.types.is_struct(kind):
        return any(_needs_conversion(kind.field(i).type) for i in range(kind.num_fields))
    return False


def _from_json(value: Any, kind: pa.DataType) -> Any:
    """A JSON value as Arrow takes it for a column of type ``kind``.

    Raises:
        ValueError / TypeError: the value does not fit the type.
    """
    if value is None:
        return None
    if pa.types.is_timestamp(kind):
        if not isinstance(value, str):
            raise TypeError(f"a time must be an ISO 8601 string, not {value!r}")
        parsed = datetime.fromisoformat(value)
        return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
    if pa.types.is_date(kind):
        return date.fromisoformat(value)
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind) or pa.types.is_fixed_size_binary(kind):
        return base64.b64decode(value, validate=True)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        if not isinstance(value, list):
            raise TypeError(f"expected a list, not {value!r}")
        return [_from_json(v, kind.value_type) for v in value]
    if pa.types.is_struct(kind):
        if not isinstance(value, dict):
            raise TypeError(f"expected an object, not {value!r}")
        return {kind.field(i).name: _from_json(value.get(kind.field(i).name), kind.field(i).type)
                for i in range(kind.num_fields)}
    return value


def arrow_table(rows: Sequence[Mapping[str, Any]], schema: pa.Schema, *, file: str) -> pa.Table:
    """``rows`` (JSON values, each holding every column of ``schema``) as a table of ``schema``.

    Raises:
        TransferRefused: a value does not fit its column (the message names the file, the column and the row).
    """
    columns: dict[str, pa.Array] = {}
    for field in schema:
        values = [r.get(field.name) for r in rows]
        try:
            if _needs_conversion(field.type):
                values = [_from_json(v, field.type) for v in values]
            columns[field.name] = pa.array(values, type=field.type)
        except (ValueError, TypeError, OverflowError, pa.ArrowException) as exc:
            raise _refused(file, field, rows, exc) from None
        if not field.nullable and columns[field.name].null_count:
            at = next(i for i, v in enumerate(values) if v is None)
            raise TransferRefused(f"{file}: row {at + 1} has no '{field.name}', which this workspace needs. Nothing "
                                  "was imported.", title="Cannot import")
    return pa.Table.from_pydict(columns, schema=schema)


def _refused(file: str, field: pa.Field, rows: Sequence[Mapping[str, Any]], exc: Exception) -> TransferRefused:
    """The refusal of a column that Arrow would not take, naming the first row whose value alone it refuses."""
    for i, row in enumerate(rows):
        try:
            pa.array([_from_json(row.get(field.name), field.type)], type=field.type)
        except (ValueError, TypeError, OverflowError, pa.ArrowException) as one:
            return TransferRefused(f"{file}: row {i + 1}: '{field.name}' is not {field.type} ({one}). Nothing was "
                                   "imported.", title="Cannot import")
    return TransferRefused(f"{file}: column '{field.name}' does not read as {field.type} ({exc}). Nothing was "
                           "imported.", title="Cannot import")
