"""All code generated for record classes, as attrs keeps its generators in ``_make.py``
and for the same reason, speed: constructors that skip ``__init__`` for values already
converted (``maker``, ``updater``, ``replace_fields``; ``registry.settable_fields``), the
comparison of two records field by field (``differ``), and the source
of the codec's per-class encoders, checkers and decoders (``encoder_source``, ``checker_source``,
``DecoderSource``; ``encoding`` and ``decoding`` compile them with their own helpers in the
namespace), straight-line code instead of a loop over fields. Generated source is
registered with linecache, so tracebacks show it; ``compiled`` is the one place that
compiles it.
"""

from agents.records.compiled.decoders import DecoderSource
from agents.records.compiled.encoders import checker_source, encoder_source
from agents.records.compiled.making import (
    compiled,
    differ,
    make_evolve,
    maker,
    replace_fields,
    slot_setter,
    updater,
)

__all__ = [
    "DecoderSource",
    "checker_source",
    "compiled",
    "differ",
    "encoder_source",
    "make_evolve",
    "maker",
    "replace_fields",
    "slot_setter",
    "updater",
]
