"""Records (SPEC §7): what ``recuo.retry`` (sync and async), ``recuo.com_retry`` and
``recuo.run_batch`` log to the ``recuo`` logger — the core's JSON lines, attempts then the
result, at the documented levels, redacted before Python sees them — and
``recuo.AttemptRecord`` / ``recuo.ResultRecord`` for loops of one's own.

Every loop here seeds its jitter and injects its sleep."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

import recuo
from conftest import vectors

CASES = vectors("redaction.json")["cases"]
# For the calls the stubs refuse, made anyway to check the runtime refuses them too.
untyped: Any = recuo

URL = "https://ana:pw@api.example.com/v1/users/ana@example.com/orders?api_key=k1&page=2"
SHOWN = "https://api.example.com/v1/users/[email]/orders?api_key=[redacted]&page=2"
SECRETS = ["ana:pw", "pw@", "ana@example.com", "k1&", "s3cr3t", "sid=abc", "tok-9"]

START = re.compile(r'"start":"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)"')


class HTTPError(Exception):
    """An HTTP error as many clients raise it: ``.status`` and ``.headers`` on the exception."""

    def __init__(self, status: int, headers: Any = None) -> None:
        super().__init__(f"HTTP {status} for {URL} (Authorization: Bearer s3cr3t)")
        self.status = status
        self.headers = headers or {}


class Response:
    def __init__(self, status_code: int, headers: Any) -> None:
        self.status_code = status_code
        self.headers = headers


class ResponseError(Exception):
    """As ``requests`` and ``httpx`` raise it: the status and headers on ``.response``."""

    def __init__(self, status_code: int, headers: Any) -> None:
        super().__init__(f"{status_code} for {URL}")
        self.response = Response(status_code, headers)


def http_verdict(exc: Exception) -> object:
    if isinstance(exc, HTTPError):
        return recuo.classify(exc.status, headers=exc.headers, now_ms=0)
    if isinstance(exc, TimeoutError):
        return recuo.classify(error="timeout")
    return False


@pytest.fixture
def records(caplog: pytest.LogCaptureFixture) -> Iterator[list[logging.LogRecord]]:
    """The records the ``recuo`` logger logs during the test, all levels."""
    caplog.set_level(logging.DEBUG, logger="recuo")
    captured: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            captured.append(record)

    handler = Keep(logging.DEBUG)
    logger = logging.getLogger("recuo")
    logger.addHandler(handler)
    try:
        yield captured
    finally:
        logger.removeHandler(handler)


def lines(records: list[logging.LogRecord]) -> list[tuple[str, str]]:
    """``(level, line)`` for each record, with the times (the only values a test cannot fix)
    checked and replaced by placeholders; and each record's ``extra`` checked to be its line."""
    out = []
    for record in records:
        assert record.name == "recuo"
        line = record.getMessage()
        assert record.msg == line and not record.args
        assert record.recuo == json.loads(line)  # type: ignore[attr-defined]
        assert START.search(line), line
        line = START.sub('"start":"<start>"', line)
        line = re.sub(r'"elapsed_ms":\d+', '"elapsed_ms":<ms>', line)
        line = re.sub(r'"total_ms":\d+', '"total_ms":<ms>', line)
        out.append((record.levelname, line))
    return out


def assert_no_secret(records: list[logging.LogRecord], secrets: list[str]) -> None:
    """No secret in any record's message, arguments, extra, exception or stack text."""
    for record in records:
        shown = [record.getMessage(), repr(record.msg), repr(record.args), json.dumps(record.__dict__.get("recuo"))]
        shown += [repr(record.exc_info), repr(record.exc_text), repr(record.stack_info)]
        for secret in secrets:
            for text in shown:
                assert secret not in text, f"{secret!r} in {text}"


def three_answers() -> list[object]:
    return [
        HTTPError(
            503,
            {"Retry-After": "1", "X-Request-Id": "req-1", "Authorization": "Bearer s3cr3t", "Set-Cookie": "sid=abc"},
        ),
        TimeoutError("read timed out"),
        "created",
    ]


EXPECTED = [
    (
        "INFO",
        '{"type":"attempt","start":"<start>","elapsed_ms":<ms>,"method":"GET","url":"' + SHOWN + '",'
        '"status":503,"request_id":"req-1","wait_headers":{"Retry-After":"1"},"delay_ms":1000,'
        '"decision":"retry","reason":"unavailable"}',
    ),
    (
        "INFO",
        '{"type":"attempt","start":"<start>","elapsed_ms":<ms>,"method":"GET","url":"' + SHOWN + '",'
        '"transport":"timeout","request_id":null,"wait_headers":{},"delay_ms":390,'
        '"decision":"retry","reason":"timeout"}',
    ),
    (
        "DEBUG",
        '{"type":"attempt","start":"<start>","elapsed_ms":<ms>,"method":"GET","url":"' + SHOWN + '",'
        '"outcome":"success","request_id":null,"wait_headers":{},"delay_ms":null,'
        '"decision":"done","reason":"success"}',
    ),
    (
        "INFO",
        '{"type":"result","start":"<start>","method":"GET","url":"' + SHOWN + '","result":"success",'
        '"attempts":3,"reason":null,"total_ms":<ms>}',
    ),
]


def test_a_seeded_retry_logs_each_attempt_then_the_result(records: list[logging.LogRecord]) -> None:
    answers = three_answers()

    def create() -> object:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    slept: list[float] = []
    value = recuo.call(
        create,
        policy=recuo.Policy(spread=0),
        classify=http_verdict,
        seed=1,
        sleep=slept.append,
        request=("GET", URL),
    )
    assert value == "created"
    assert slept == [1.0, 0.39]
    assert lines(records) == EXPECTED
    assert_no_secret(records, SECRETS)
    # The result's start is the first attempt's.
    assert records[-1].recuo["start"] == records[0].recuo["start"]  # type: ignore[attr-defined]


def test_the_async_loop_logs_the_same_records(records: list[logging.LogRecord]) -> None:
    answers = three_answers()
    slept: list[float] = []

    async def no_sleep(seconds: float) -> None:
        slept.append(seconds)

    @recuo.retry(policy=recuo.Policy(spread=0), classify=http_verdict, seed=1, sleep=no_sleep, request=("GET", URL))
    async def create() -> object:
        await asyncio.sleep(0)
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert asyncio.run(create()) == "created"
    assert slept == [1.0, 0.39]
    recuo_only = [r for r in records if r.name == "recuo"]
    assert lines(recuo_only) == EXPECTED
    assert_no_secret(recuo_only, SECRETS)


def test_a_give_up_logs_a_warning(records: list[logging.LogRecord]) -> None:
    error = HTTPError(500, {"X-Request-Id": "req-2", "Cookie": "sid=abc"})

    def fail() -> None:
        raise error

    with pytest.raises(HTTPError) as caught:
        recuo.com_retry(fail, tentativas=2, seed=1, sleep=lambda s: None, request=("POST", URL))
    assert caught.value is error
    assert lines(records) == [
        (
            "INFO",
            '{"type":"attempt","start":"<start>","elapsed_ms":<ms>,"method":"POST","url":"' + SHOWN + '",'
            '"status":500,"request_id":"req-2","wait_headers":{},"delay_ms":195,'
            '"decision":"retry","reason":"server_error"}',
        ),
        (
            "INFO",
            '{"type":"attempt","start":"<start>","elapsed_ms":<ms>,"method":"POST","url":"' + SHOWN + '",'
            '"status":500,"request_id":"req-2","wait_headers":{},"delay_ms":null,'
            '"decision":"give_up","reason":"attempts_exhausted"}',
        ),
        (
            "WARNING",
            '{"type":"result","start":"<start>","method":"POST","url":"' + SHOWN + '","result":"gave_up",'
            '"attempts":2,"reason":"attempts_exhausted","total_ms":<ms>}',
        ),
    ]
    assert_no_secret(records, SECRETS)


def test_a_permanent_verdict_names_its_cause(records: list[logging.LogRecord]) -> None:
    def post() -> None:
        raise HTTPError(500)

    with pytest.raises(HTTPError):
        recuo.call(
            post,
            classify=lambda exc: recuo.classify(500, method="POST"),
            seed=1,
            sleep=lambda s: None,
            request=("POST", "/pay"),
        )
    attempt, result = (r.recuo for r in records)  # type: ignore[attr-defined]
    assert (attempt["decision"], attempt["reason"], attempt["status"]) == ("give_up", "not_idempotent", 500)
    assert (result["result"], result["reason"], result["attempts"]) == ("gave_up", "permanent", 1)


def test_a_success_at_once_logs_at_debug_only(records: list[logging.LogRecord]) -> None:
    assert recuo.call(lambda: 7, seed=1, request=("GET", "https://h.io/a")) == 7
    assert [(r.levelname, r.recuo["type"]) for r in records] == [  # type: ignore[attr-defined]
        ("DEBUG", "attempt"),
        ("DEBUG", "result"),
    ]
    assert records[1].recuo == {  # type: ignore[attr-defined]
        "type": "result",
        "start": records[1].recuo["start"],  # type: ignore[attr-defined]
        "method": "GET",
        "url": "https://h.io/a",
        "result": "success",
        "attempts": 1,
        "reason": None,
        "total_ms": records[1].recuo["total_ms"],  # type: ignore[attr-defined]
    }


def test_a_task_without_http_meaning(records: list[logging.LogRecord]) -> None:
    calls = iter([ConnectionError("down"), None])

    def task() -> str:
        error = next(calls)
        if error is not None:
            raise error
        return "ok"

    recuo.com_retry(task, seed=1, sleep=lambda s: None)
    first = records[0].recuo  # type: ignore[attr-defined]
    assert (first["method"], first["url"], first["transport"], first["reason"]) == ("", "", "other", "server_error")
    assert "status" not in first


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_no_secret_of_a_case_reaches_the_log(case: dict[str, Any], records: list[logging.LogRecord]) -> None:
    headers = [(name, value) for name, value in case["headers"]]
    errors = [HTTPError(503, headers), ResponseError(503, headers), TimeoutError(case["url"])]

    def call() -> None:
        raise errors.pop(0)

    with pytest.raises(TimeoutError):
        recuo.call(
            call,
            policy=recuo.Policy(max_attempts=3, spread=0),
            classify=lambda exc: recuo.classify(503, headers=headers, now_ms=0),
            seed=1,
            sleep=lambda s: None,
            request=("GET", case["url"]),
        )

    async def call_async() -> None:
        recuo.current_attempt().record_request("PUT", case["url"])
        recuo.current_attempt().record_response(429, headers)
        raise HTTPError(429, headers)

    with pytest.raises(HTTPError):
        asyncio.run(recuo.call(call_async, policy=recuo.Policy(max_attempts=2), seed=1, sleep=lambda s: None))
    assert len(records) == 4 + 3
    assert all(r.recuo.get("url") == recuo.redact_url(case["url"]) for r in records)  # type: ignore[attr-defined]
    assert_no_secret(records, case["secrets"])


def test_what_an_attempt_received_first_found(records: list[logging.LogRecord]) -> None:
    """record_response, then what classify judged, then the exception's own attributes, then
    its response's, else the transport kind ``other``."""
    headers = {"X-Request-Id": "from-exception", "X-RateLimit-Remaining": "0"}
    errors: list[Exception] = [
        HTTPError(502, headers),  # record_response says 429
        HTTPError(502, headers),  # classify judged 503
        HTTPError(502, headers),  # the exception's own .status
        ResponseError(504, headers),  # its .response.status_code
        ValueError("no HTTP meaning"),
    ]
    said = {0: (429, {"X-Request-Id": "said"})}

    def call() -> None:
        attempt = recuo.current_attempt()
        if attempt.number in said:
            status, h = said[attempt.number]
            attempt.record_response(status, h)
        raise errors[attempt.number]

    judged = iter(range(5))

    def judge(exc: Exception) -> object:
        if next(judged) == 1:
            return recuo.classify(503, headers={"X-Amzn-RequestId": "judged"}, now_ms=0)
        return True

    with pytest.raises(ValueError):
        recuo.call(call, policy=recuo.Policy(max_attempts=5), classify=judge, seed=1, sleep=lambda s: None)
    seen = [(r.recuo.get("status"), r.recuo.get("transport"), r.recuo["request_id"]) for r in records[:5]]  # type: ignore[attr-defined]
    assert seen == [
        (429, None, "said"),
        (503, None, "judged"),
        (502, None, "from-exception"),
        (504, None, "from-exception"),
        (None, "other", None),
    ]
    assert records[2].recuo["wait_headers"] == {"X-RateLimit-Remaining": "0"}  # type: ignore[attr-defined]


def test_odd_exceptions_never_break_a_record(records: list[logging.LogRecord]) -> None:
    class Odd(Exception):
        status = True  # a bool is not a status

        @property
        def headers(self) -> dict[str, str]:
            raise RuntimeError("cannot read")

        @property
        def response(self) -> object:
            raise RuntimeError("cannot read either")

    class Strange(Exception):
        status_code = 42  # not three digits
        headers = 12  # not headers

    class Partial(Exception):
        status = 418
        headers = {"X-Request-Id": 5}  # a value that is not text: the headers are left out

    errors: list[Exception] = [Odd(), Strange(), Partial()]

    def call() -> None:
        raise errors.pop(0)

    with pytest.raises(Partial):
        recuo.call(call, policy=recuo.Policy(max_attempts=3), seed=1, sleep=lambda s: None)
    got = [(r.recuo.get("status"), r.recuo.get("transport"), r.recuo.get("request_id")) for r in records[:3]]  # type: ignore[attr-defined]
    assert got == [(None, "other", None), (None, "other", None), (418, None, None)]


def test_record_request_replaces_the_loops_request(records: list[logging.LogRecord]) -> None:
    def call() -> str:
        attempt = recuo.current_attempt()
        if attempt.number == 0:
            attempt.record_request("PATCH", b"https://h.io/a?token=\xff")
            raise ConnectionError("down")
        return "ok"

    recuo.call(call, seed=1, sleep=lambda s: None, request=("GET", "https://h.io/default"))
    urls = [(r.recuo["method"], r.recuo["url"]) for r in records]  # type: ignore[attr-defined]
    assert urls == [
        ("PATCH", "https://h.io/a?token=[redacted]"),
        ("GET", "https://h.io/default"),
        ("PATCH", "https://h.io/a?token=[redacted]"),  # the result: the last request said
    ]


def test_run_batch_logs_every_operation_and_those_never_started(records: list[logging.LogRecord]) -> None:
    def op(i: int) -> Any:
        def call() -> int:
            recuo.current_attempt().record_request("GET", f"https://h.io/items/{i}?token=t{i}")
            return i

        return call

    paced = recuo.Gate(regulator=recuo.Regulator("10/s"))
    report = recuo.run_batch([op(i) for i in range(5)], gate=paced, deadline=0.15)
    started = [r for r in report.results if r.status == "succeeded"]
    assert 1 <= len(started) < 5
    results = [r.recuo for r in records if r.recuo["type"] == "result"]  # type: ignore[attr-defined]
    assert len(results) == 5
    done = [r for r in results if r["result"] == "success"]
    never = [r for r in results if r["result"] == "gave_up"]
    assert len(done) == len(started) == report.stats.successes
    assert all(r["url"].endswith("?token=[redacted]") for r in done)
    assert never == [
        {
            "type": "result",
            "start": r["start"],
            "method": "",
            "url": "",
            "result": "gave_up",
            "attempts": 0,
            "reason": "wait_exceeds_deadline",
            "total_ms": r["total_ms"],
        }
        for r in never
    ]
    # Given up without waiting for a slot (one is 100 ms away): the time is the machine's own,
    # a millisecond or so on a busy one.
    assert all(r["total_ms"] < 50 for r in never), never
    assert len(never) == report.stats.not_started
    assert_no_secret(records, [f"t{i}" for i in range(5)])


def test_nothing_is_logged_when_the_logger_is_off(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="recuo")

    def fail() -> None:
        raise HTTPError(500)

    with pytest.raises(HTTPError):
        recuo.call(fail, seed=1, sleep=lambda s: None, request=("GET", URL))
    assert [r for r in caplog.records if r.name == "recuo"] == []


def test_only_warnings_by_default(caplog: pytest.LogCaptureFixture) -> None:
    # The logger left at its default level (the root's WARNING): only the give-up's result.
    logger = logging.getLogger("recuo")
    level = logger.level
    logger.setLevel(logging.NOTSET)
    caplog.set_level(logging.WARNING)

    def fail() -> None:
        raise HTTPError(500)

    try:
        with pytest.raises(HTTPError):
            recuo.call(fail, seed=1, sleep=lambda s: None)
        assert recuo.call(lambda: 1, seed=1) == 1
    finally:
        logger.setLevel(level)
    got = [(r.levelname, r.recuo["type"]) for r in caplog.records if r.name == "recuo"]  # type: ignore[attr-defined]
    assert got == [("WARNING", "result")]


def test_the_library_prints_nothing_unless_configured() -> None:
    # A NullHandler on the `recuo` logger keeps logging's last-resort handler quiet.
    script = (
        "import recuo\n"
        "def fail():\n    raise ValueError('x')\n"
        "try:\n    recuo.call(fail, seed=1, sleep=lambda s: None)\nexcept ValueError:\n    pass\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=30)
    assert (done.stdout, done.stderr) == ("", "")
    configured = subprocess.run(
        [sys.executable, "-c", "import logging; logging.basicConfig(format='%(levelname)s %(message)s')\n" + script],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    assert configured.stderr.startswith('WARNING {"type":"result"')


def test_a_logging_failure_ends_the_loop_like_a_hook(records: list[logging.LogRecord]) -> None:
    class Refuse(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            if record.recuo.get("decision") == "retry":  # type: ignore[attr-defined]
                raise RuntimeError("the log is full")
            return True

    logger = logging.getLogger("recuo")
    refuse = Refuse()
    logger.addFilter(refuse)
    error = ConnectionError("down")

    def fail() -> None:
        raise error

    calls: list[int] = []
    try:
        with pytest.raises(RuntimeError, match="the log is full") as caught:
            recuo.call(fail, seed=1, sleep=lambda s: None, on_retry=lambda *a: calls.append(1))
        assert caught.value.__context__ is error
        assert calls == []  # the record comes before on_retry

        async def fail_async() -> None:
            raise error

        with pytest.raises(RuntimeError, match="the log is full") as caught:
            asyncio.run(recuo.call(fail_async, seed=1, sleep=lambda s: None))
        assert caught.value.__context__ is error
    finally:
        logger.removeFilter(refuse)


def test_records_come_before_on_give_up(records: list[logging.LogRecord]) -> None:
    seen: list[int] = []

    def fail() -> None:
        raise ValueError("x")

    with pytest.raises(ValueError):
        recuo.call(
            fail,
            policy=recuo.Policy(max_attempts=1),
            on_give_up=lambda report: seen.append(len(records)),
        )
    assert seen == [2]


def test_a_cancelled_async_operation(records: list[logging.LogRecord]) -> None:
    async def main() -> None:
        started = asyncio.Event()

        @recuo.retry(seed=1, request=("GET", "https://h.io/slow"))
        async def slow() -> None:
            started.set()
            await asyncio.sleep(60)

        task = asyncio.ensure_future(slow())
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    got = [(r.levelname, r.recuo.get("decision"), r.recuo["reason"]) for r in records]  # type: ignore[attr-defined]
    assert got == [("INFO", "give_up", "cancelled"), ("WARNING", None, "cancelled")]


def test_the_verdict_keeps_only_what_the_record_needs() -> None:
    seen = recuo.classify(503, headers={"Authorization": "Bearer s3cr3t", "X-Request-Id": "r"}, now_ms=0)
    assert seen == recuo.classify(503, now_ms=0)  # equality looks at the verdict alone
    assert hash(seen) == hash(recuo.classify(503, now_ms=0))
    assert "s3cr3t" not in repr(seen)


# Records of one's own loop.


def test_an_attempt_record_is_the_cores() -> None:
    record = recuo.AttemptRecord(
        784_111_777_123,
        250,
        "GET",
        "https://u:pw@api.example.com/users/ana@example.com?api_key=k1&page=2",
        status=429,
        headers={
            "Authorization": "Bearer s3cr3t",
            "Retry-After": "12",
            "X-RateLimit-Remaining": "0",
            "X-Request-Id": "req-7",
            "Set-Cookie": "sid=abc",
        },
        delay_ms=12_345,
        decision="retry",
        reason="rate_limited",
    )
    # The line of docs/records.md, and of the core's own test.
    assert record.to_json() == (
        '{"type":"attempt","start":"1994-11-06T08:49:37.123Z","elapsed_ms":250,"method":"GET",'
        '"url":"https://api.example.com/users/[email]?api_key=[redacted]&page=2","status":429,'
        '"request_id":"req-7","wait_headers":{"Retry-After":"12","X-RateLimit-Remaining":"0"},'
        '"delay_ms":12345,"decision":"retry","reason":"rate_limited"}'
    )
    assert record.to_dict() == json.loads(record.to_json())
    assert (record.start, record.start_ms, record.elapsed_ms) == ("1994-11-06T08:49:37.123Z", 784_111_777_123, 250)
    assert (record.method, record.url_malformed, record.status, record.transport) == ("GET", False, 429, None)
    assert (record.request_id, record.delay_ms, record.decision, record.reason) == (
        "req-7",
        12_345,
        "retry",
        "rate_limited",
    )
    assert record.wait_headers == [("Retry-After", "12"), ("X-RateLimit-Remaining", "0")]
    assert repr(record) == f"<recuo.AttemptRecord {record.to_json()}>"
    for secret in ["s3cr3t", "pw@", "ana@", "k1", "sid=abc"]:
        assert secret not in record.to_json() and secret not in repr(record)


def test_attempt_record_outcomes() -> None:
    failed = recuo.AttemptRecord(-1, 0, "GET", "/a b", error="reset", decision="give_up", reason="not_idempotent")
    assert failed.to_json() == (
        '{"type":"attempt","start":"1969-12-31T23:59:59.999Z","elapsed_ms":0,"method":"GET",'
        '"url":"/a b","url_malformed":true,"transport":"reset","request_id":null,"wait_headers":{},'
        '"delay_ms":null,"decision":"give_up","reason":"not_idempotent"}'
    )
    done = recuo.AttemptRecord(0, 3, "", "", decision="done", reason="success")
    assert (done.status, done.transport, done.to_dict()["outcome"]) == (None, None, "success")
    assert done == recuo.AttemptRecord(0, 3, "", "", decision="done", reason="success")
    assert done != failed


def test_a_result_record_is_the_cores() -> None:
    record = recuo.ResultRecord(0, "POST", '/pay?token=x"y', attempts=5, total_ms=1234, reason="attempts_exhausted")
    assert record.to_json() == (
        '{"type":"result","start":"1970-01-01T00:00:00.000Z","method":"POST","url":"/pay?token=[redacted]",'
        '"result":"gave_up","attempts":5,"reason":"attempts_exhausted","total_ms":1234}'
    )
    assert (record.result, record.attempts, record.reason, record.total_ms) == ("gave_up", 5, "attempts_exhausted", 1234)
    ok = recuo.ResultRecord(0, "GET", "https://h.io", attempts=1, total_ms=5)
    assert (ok.result, ok.reason, ok.to_dict()["reason"]) == ("success", None, None)
    assert repr(ok).startswith('<recuo.ResultRecord {"type":"result"')


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: untyped.AttemptRecord(0, 0, "GET", "/", decision="later", reason="success"), ValueError, "decision"),
        (lambda: untyped.AttemptRecord(0, 0, "GET", "/", decision="done", reason="fine"), ValueError, "reason"),
        (lambda: untyped.AttemptRecord(0, 0, "GET", "/", status=99, decision="done", reason="success"), ValueError, "status"),
        (
            lambda: untyped.AttemptRecord(0, 0, "GET", "/", status=500, error="reset", decision="done", reason="success"),
            TypeError,
            "not both",
        ),
        (lambda: untyped.AttemptRecord(0, 0, "GET", "/", error="boom", decision="done", reason="success"), ValueError, "error"),
        (lambda: untyped.AttemptRecord(0, -1, "GET", "/", decision="done", reason="success"), ValueError, "elapsed_ms"),
        (lambda: untyped.AttemptRecord(2**63, 0, "GET", "/", decision="done", reason="success"), ValueError, "start_ms"),
        (lambda: untyped.AttemptRecord(0, 0, b"GET", "/", decision="done", reason="success"), TypeError, "method"),
        (lambda: untyped.AttemptRecord(0, 0, "GET", None, decision="done", reason="success"), TypeError, "url"),
        (lambda: untyped.ResultRecord(0, "GET", "/", attempts=-1, total_ms=0), ValueError, "attempts"),
        (lambda: untyped.ResultRecord(0, "GET", "/", attempts=1, total_ms=0, reason="rate_limited"), ValueError, "reason"),
        (lambda: untyped.retry(lambda: 1, request="GET /"), TypeError, "request must be a"),
        (lambda: untyped.retry(lambda: 1, request=("GET",)), TypeError, "request must be a"),
        (lambda: untyped.retry(lambda: 1, request=(1, "/")), TypeError, "method must be a str"),
        (lambda: untyped.com_retry(lambda: 1, request=("GET", 1)), TypeError, "url must be str or bytes"),
    ],
)
def test_bad_input(call: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        call()


def test_record_response_checks_its_status() -> None:
    def call() -> None:
        recuo.current_attempt().record_response(1000)

    with pytest.raises(ValueError, match="status must be between 100 and 999"):
        recuo.call(call, policy=recuo.Policy(max_attempts=1))
