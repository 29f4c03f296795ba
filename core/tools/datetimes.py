"""The one datetime type of tool arguments: any ISO 8601 date-time, kept in UTC, within years 1–9999 there.

Python's ``datetime`` ends at year 9999, but an offset can carry a local time past it:
``9999-12-31T23:59:59-05:00`` is year 10000 in UTC. Stored, such a value could not be read back; as a filter
it could not be written as SQL. So every datetime argument of every tool (and of recall's plan steps, which
validate against the same models) is converted to UTC at validation, and a value that falls outside years
1–9999 there is refused, naming the argument, before anything runs.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator
from pydantic_core import PydanticCustomError

#: What a datetime argument accepts, as refusals say it.
ACCEPTS = ("a date-time within years 1–9999 in UTC, such as 2025-06-01T14:30:00+02:00 or 2025-06-01T12:30:00Z "
           "(one without an offset is taken as UTC)")


def to_utc(value: datetime) -> datetime:
    """``value`` in UTC; a value without an offset is taken as UTC (as the stores and filters always did).

    Raises:
        PydanticCustomError: it falls outside years 1–9999 in UTC (validation refuses the argument with it).
    """
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise PydanticCustomError("datetime_range", f"it is outside years 1–9999 in UTC; give {ACCEPTS}") from None


UtcDatetime = Annotated[datetime, AfterValidator(to_utc)]
