"""The desktop's background jobs: work runs on workers, and what they report reaches listeners on the Qt thread."""

from __future__ import annotations

import threading
from typing import Any

from PySide6.QtCore import Qt

from engram.app.desktop.jobs import Job, Jobs, Report
from engram.core import EngramError
from engram.core.events import MemoriesWritten


def test_every_signal_is_emitted_on_the_qt_thread_whatever_thread_reported_it(qtbot: Any) -> None:
    """A listener connected directly runs on the emitting thread; pytest-qt's ``waitSignal`` crashed once when a
    worker's ``finished`` reached it on that worker. Every emission must come from the Qt thread."""
    jobs = Jobs()
    qt_thread = threading.get_ident()
    heard: list[tuple[str, bool]] = []
    jobs.changed.connect(lambda job: heard.append(("changed", threading.get_ident() == qt_thread)),
                         Qt.ConnectionType.DirectConnection)
    jobs.finished.connect(lambda job: heard.append(("finished", threading.get_ident() == qt_thread)),
                          Qt.ConnectionType.DirectConnection)
    jobs.memories_changed.connect(lambda ws: heard.append(("memories", threading.get_ident() == qt_thread)),
                                  Qt.ConnectionType.DirectConnection)
    ended: list[Job] = []
    worked_on: list[int] = []

    def work(report: Report) -> str:
        worked_on.append(threading.get_ident())
        report(1, 2, "halfway")
        jobs.engine_event(MemoriesWritten("default", "store", 1))
        return "done"

    try:
        with qtbot.waitSignal(jobs.finished, timeout=10_000):
            jobs.submit("task", "test: reports from a worker", work, on_done=ended.append)
        foreign = threading.Thread(target=jobs.engine_event, args=(MemoriesWritten("default", "store", 1),))
        foreign.start()
        foreign.join()
        qtbot.waitUntil(lambda: heard.count(("memories", True)) + heard.count(("memories", False)) == 2)
    finally:
        jobs.shutdown()
    assert worked_on and worked_on[0] != qt_thread, "the work itself runs on a worker"
    assert [kind for kind, _ in heard if kind != "memories"] == ["changed", "changed", "changed", "finished"]
    assert all(on_qt for _, on_qt in heard), heard
    assert [(j.result, j.error, j.finished) for j in ended] == [("done", None, True)], "the submitter hears first"


def test_a_failing_job_still_reaches_every_listener_when_its_handler_raises(qtbot: Any) -> None:
    jobs = Jobs()
    seen: list[Job] = []
    jobs.finished.connect(seen.append)

    def fail(_report: Report) -> None:
        raise EngramError("The bucket refused the key.", title="Credentials refused")

    def broken_handler(job: Job) -> None:
        raise RuntimeError("a handler's own bug")

    try:
        with qtbot.capture_exceptions() as raised, qtbot.waitSignal(jobs.finished, timeout=10_000):
            jobs.submit("task", "test: fails", fail, on_done=broken_handler)
    finally:
        jobs.shutdown()
    assert [(j.error.title if j.error else None) for j in seen] == ["Credentials refused"]
    assert [str(exc) for _type, exc, _tb in raised] == ["a handler's own bug"]
