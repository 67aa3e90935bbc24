"""The log pump reads the lines Docker's followed stream left out when a container exited (issue 33 stop: a
20,000-line burst whose last line never came, with no error).  That race cannot be caused on demand, so the
engine here is a stand-in that answers as Docker's API does: a followed stream that ends early, and the log
read at once (`tail`) with every line."""

from __future__ import annotations

from trainspec.emulator.engine.logpump import TAIL, LogPump


class _Engine:
    def __init__(self, written: list[bytes], streamed: int):
        self.written, self.streamed = written, streamed

    def logs(self, cid):  # the followed stream, ending after `streamed` lines
        yield b"".join(line + b"\n" for line in self.written[:self.streamed])

    def log_tail(self, cid, lines):
        return b"".join(line + b"\n" for line in self.written[-lines:])


class _Reporter:
    def __init__(self):
        self.lines: list[str] = []

    def log(self, name, line):
        self.lines.append(line)


def _pump(written: list[bytes], streamed: int) -> list[str]:
    reporter = _Reporter()
    pump = LogPump(_Engine(written, streamed), "c1", "worker-0", reporter, None, lambda s: s)
    pump.start()
    pump.drain()
    return reporter.lines


def test_the_last_line_after_a_burst_of_empty_lines_is_read_back():
    written = [b"value x"] + [b""] * 20_000 + [b"second attempt ok"]
    shown = _pump(written, len(written) - 1)
    assert shown[-1] == "second attempt ok" and len(shown) == len(written)


def test_nothing_is_shown_twice_when_the_stream_was_whole():
    written = [f"line {i}".encode() for i in range(50)]
    assert _pump(written, len(written)) == [w.decode() for w in written]


def test_a_stream_that_gave_nothing_is_read_back_whole():
    written = [b"a", b"b"]
    assert _pump(written, 0) == ["a", "b"]


def test_more_missing_than_the_tail_is_said_not_guessed():
    written = [f"line {i}".encode() for i in range(3 * TAIL)]
    shown = _pump(written, TAIL // 2)
    assert len(shown) == TAIL // 2 + 1 and "more than 1000 are missing" in shown[-1]
