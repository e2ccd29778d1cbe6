"""Stopping the research loop from Python (issue 31, item 1): `should_stop` is asked between
iterations; a stop returns `paused` with the committed iterations kept, and the next run goes on
from the next iteration."""

from __future__ import annotations

from pathlib import Path

from loopwright.research import LoopEvent, read_run_state
from loopwright.search import StopHandle
from tests.research.conftest import Meta, make_loop, make_workdir


def test_a_stop_between_iterations_pauses_the_run_and_the_next_run_goes_on(
    tmp_path: Path,
) -> None:
    wd = make_workdir(tmp_path / "v1")
    handle = StopHandle()
    events: list[LoopEvent] = []

    def listen(event: LoopEvent) -> None:
        events.append(event)
        if event.kind == "committed":
            handle.stop()

    outcome = make_loop(wd, Meta(), listener=listen, should_stop=handle).run(None)
    assert (outcome.status, outcome.committed) == ("paused", (1,))
    assert "should_stop" in outcome.reason
    state = read_run_state(wd)
    assert (state.status, state.iteration) == ("paused", 2)
    assert events[-1].kind == "stopped"

    handle.reset()
    again = make_loop(wd, Meta(), should_stop=handle).run(1)
    assert again.committed == (2,)
