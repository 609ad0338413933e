"""Which attempt is current, and which loop a nested loop joins (issue 18).

A blocking loop's attempt is current for what it runs on its own thread, without a context
set; where greenlets or ``nest_asyncio`` are loaded it is set in the context instead. Both
ways must answer the same for everything that runs inside the attempt on its thread.
"""

from __future__ import annotations

import contextvars
import subprocess
import sys
import textwrap
import threading
from typing import Any

import pytest

import recuo


def no_sleep(_seconds: float) -> None:
    pass


def in_thread(run: Any) -> Any:
    """What ``run()`` answers (or raises) on a new thread."""
    answer: list[Any] = []

    def target() -> None:
        try:
            answer.append(("value", run()))
        except Exception as exc:
            answer.append(("raised", type(exc).__name__))

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(10)
    assert not thread.is_alive()
    return answer[0]


def test_a_thread_started_in_a_copy_of_the_attempts_context_does_not_share_it() -> None:
    def attempt() -> Any:
        copied = contextvars.copy_context()
        return in_thread(lambda: copied.run(recuo.current_attempt))

    assert recuo.call(attempt) == ("raised", "RuntimeError")


def test_a_loop_on_another_thread_has_attempts_of_its_own() -> None:
    calls = 0

    def down() -> None:
        nonlocal calls
        calls += 1
        raise ConnectionError("down")

    def inner() -> Any:
        copied = contextvars.copy_context()
        policy = recuo.Policy(max_attempts=3)
        return in_thread(lambda: copied.run(recuo.call, down, policy=policy, sleep=no_sleep))

    assert recuo.call(inner, policy=recuo.Policy(max_attempts=2)) == ("raised", "ConnectionError")
    assert calls == 3


def test_code_inside_the_attempt_on_its_thread_sees_it() -> None:
    def attempt() -> Any:
        mine = recuo.current_attempt()
        copied = contextvars.copy_context()
        seen = [copied.run(recuo.current_attempt), recuo.current_attempt()]
        inner = recuo.call(recuo.current_attempt)
        after = recuo.current_attempt()
        return [a is mine for a in seen], inner is not mine, after is mine

    assert recuo.call(attempt) == ([True, True], True, True)
    with pytest.raises(RuntimeError):
        recuo.current_attempt()


@pytest.mark.parametrize("module", ["greenlet", "nest_asyncio"])
def test_where_contexts_take_turns_the_attempt_is_set_in_the_context(module: str) -> None:
    # A module of that name loaded (a stand-in: what matters is that it is loaded, and once
    # it is, it stays so), in a process of its own.
    script = textwrap.dedent(
        f"""
        import contextvars, sys, threading, types
        import recuo
        sys.modules[{module!r}] = types.ModuleType({module!r})

        def no_sleep(_s):
            pass

        calls = 0
        def down():
            global calls
            calls += 1
            raise ConnectionError("down")

        def attempt():
            mine = recuo.current_attempt()
            copied = contextvars.copy_context()
            seen = []
            thread = threading.Thread(target=lambda: seen.append(copied.run(recuo.current_attempt)))
            thread.start()
            thread.join()
            try:
                recuo.call(down, policy=recuo.Policy(max_attempts=9), sleep=no_sleep)
            except ConnectionError:
                pass
            return seen[0] is mine, recuo.current_attempt() is mine

        print(recuo.call(attempt, policy=recuo.Policy(max_attempts=4)), calls)
        print(recuo._recuo._current_attempt.get())
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    # The thread's copy holds the attempt; the nested loop shares the outer loop's 4 attempts
    # (its first is the outer attempt that runs it), and the context is as it was.
    assert done.stdout.split("\n")[:2] == ["(True, True) 4", "None"]
