"""The base of every scenario model and the field types they share.

`Strict` makes unknown keys errors (extra=forbid) so typos never pass silently, and refuses
NaN, infinity, numbers fio cannot read and control characters. `Size`, `Duration`, `Ratio`
and `Percent` read values with units (scenario/units.py).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    PlainSerializer,
    ValidationInfo,
    field_validator,
)

from assay.scenario import messages, units


def _size(v: Any) -> int:
    return units.parse_size(v)


def _duration(v: Any) -> float:
    return units.parse_duration(v)


def _ratio(v: Any) -> float:
    return units.parse_ratio(v)


def _percent(v: Any) -> float:
    return units.parse_percent(v)


Size = Annotated[int, BeforeValidator(_size), PlainSerializer(units.format_size, when_used="json")]
Duration = Annotated[float, BeforeValidator(_duration)]
Ratio = Annotated[float, BeforeValidator(_ratio)]
Percent = Annotated[float, BeforeValidator(_percent)]

MAX_NUMBER = (1 << 63) - 1  # the largest number fio reads (a signed 64-bit integer)
FREE_TEXT = ("description", "command", "run", "text")  # may hold newlines and tabs


class Strict(BaseModel):
    # NaN and infinity are no number a user can ask for (an infinite rate overflows fio's
    # integers): refused here once for every float of every scenario model
    model_config = ConfigDict(extra="forbid", validate_default=True, allow_inf_nan=False)

    @field_validator("*", mode="after")
    @classmethod
    def _plain(cls, v: Any, info: ValidationInfo) -> Any:
        """Every number fits the 64-bit integers fio reads (a seed of 1e26 was fio's parse
        error); no name or path holds a control character (an escape sequence would rewrite
        the terminal of whoever lists the run), free text only newlines and tabs."""
        if isinstance(v, int | float) and not isinstance(v, bool) and abs(v) > MAX_NUMBER:
            raise ValueError(f"{messages.show(v)} is too large: at most {MAX_NUMBER}")
        allowed = "\n\t" if info.field_name in FREE_TEXT else ""
        for text in (v if isinstance(v, list) else [v]):
            if isinstance(text, str) and (bad := messages.control(text, allowed)):
                raise ValueError(f"{messages.show(text)} holds the control character "
                                 f"{bad!r}: not allowed here")
        return v
