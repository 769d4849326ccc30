"""Token usage and cost of model calls."""

from __future__ import annotations

from typing import Final

import attrs

from agents.records.frozen import to_float
from agents.records.record import Record
from agents.records.registry import OPTIONAL

__all__ = ["ZERO_USAGE", "Usage"]


@attrs.frozen(kw_only=True)
class Usage(Record):
    """Tokens and cost of one or more model calls. Tokens read from and written to the
    provider's cache are part of the input; reasoning tokens are part of the output."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cost: float = attrs.field(default=0.0, converter=to_float)
    cache_write_tokens: int = attrs.field(default=0, metadata={OPTIONAL: True})
    reasoning_tokens: int = attrs.field(default=0, metadata={OPTIONAL: True})

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        if other == ZERO_USAGE:
            return self
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cost=self.cost + other.cost,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
        )


ZERO_USAGE: Final = Usage()
