"""A panic inside recuo is an ordinary error (SPEC §10, §12; issue 11): ``recuo.InternalError``,
a subclass of ``Exception``, never a ``BaseException`` that ``except Exception`` misses."""

import pytest

import recuo
from recuo import _recuo


def test_a_panic_arrives_as_recuo_internal_error() -> None:
    with pytest.raises(recuo.InternalError) as info:
        _recuo._force_panic()
    error = info.value
    assert isinstance(error, Exception)
    assert str(error) == "recuo._force_panic: a deliberate panic at the boundary, for a test"
    assert (error.code, error.name) == (900, "panic")
    assert recuo.InternalError.__module__ == "recuo"
    assert recuo.InternalError.__mro__[1:] == (Exception, BaseException, object)


def test_except_exception_catches_a_panic() -> None:
    caught: list[str] = []
    try:
        _recuo._force_panic()
    except Exception as e:  # what every caller already writes
        caught.append(type(e).__name__)
    assert caught == ["PanicException"]
