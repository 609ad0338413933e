"""What ``recuo.Report`` and ``recuo.Stats`` add to their fields: the bases of the classes
generated from the core's declarations (``recuo/_values.py``). Only what follows from the
fields lives here — seconds from milliseconds, and through recuo's core the sum of stats."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _recuo

if TYPE_CHECKING:
    from ._values import Stats


class ReportFace:
    """``recuo.Report``'s times in seconds."""

    __slots__ = ()

    if TYPE_CHECKING:
        elapsed_ms: int
        delays_ms: tuple[int, ...]
        retry_at_unix_ms: int | None

    @property
    def elapsed(self) -> float:
        """``elapsed_ms`` in seconds."""
        return self.elapsed_ms / 1000

    @property
    def delays(self) -> tuple[float, ...]:
        """The delays decided between attempts, in seconds."""
        return tuple(ms / 1000 for ms in self.delays_ms)

    @property
    def retry_at(self) -> float | None:
        """``retry_at_unix_ms`` in seconds (Unix time, as ``time.time()``), or ``None``."""
        return None if self.retry_at_unix_ms is None else self.retry_at_unix_ms / 1000


class StatsFace:
    """``recuo.Stats``'s sums (recuo's core's) and spacings in milliseconds.

    ``a.merge(b)`` (or ``a + b``) adds up two recorders' stats: counts add up, the spacing is
    that of the merged timeline as far as it can be known (the shortest of either, the span of
    both), and ``max_in_flight`` adds up — an upper bound when the two ran at the same time.
    ``sum(parts)`` merges many."""

    __slots__ = ()

    if TYPE_CHECKING:
        min_spacing_ns: int | None

    @property
    def starts(self) -> int:
        """All attempts started: ``initial + retries``."""
        return _recuo._stats_derived(self)[0]

    @property
    def min_spacing_ms(self) -> float | None:
        """The shortest time between two consecutive starts, in milliseconds, or ``None``."""
        return None if self.min_spacing_ns is None else self.min_spacing_ns / 1e6

    @property
    def mean_spacing_ms(self) -> float | None:
        """The mean time between consecutive starts, in milliseconds, or ``None``."""
        mean_ns = _recuo._stats_derived(self)[1]
        return None if mean_ns is None else mean_ns / 1e6

    def merge(self, other: Stats) -> Stats:
        """These stats and ``other``'s added up; ``OverflowError`` when a count would pass
        2**64 - 1."""
        return _recuo._stats_merge(self, other)

    def __add__(self, other: Stats) -> Stats:
        """``self.merge(other)``."""
        if not isinstance(other, StatsFace):
            return NotImplemented
        return self.merge(other)

    def __radd__(self, other: Stats | int) -> Stats:
        """``other.merge(self)``; ``0 + stats`` is ``stats``, so ``sum(parts)`` works (any
        other int is a ``TypeError``)."""
        if isinstance(other, StatsFace):
            return _recuo._stats_merge(other, self)
        if isinstance(other, int) and not isinstance(other, bool) and other == 0:
            return self  # type: ignore[return-value]
        return NotImplemented
