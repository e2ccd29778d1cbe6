"""`SimModel`: a seeded, simulated coding agent that acts only through tool calls.

Each node invocation (an *episode*: a conversation that starts with a system and a user
message) is played as a short plan: read the instruction the prompt names, recognise the task,
gather context (a builder: notes, file list, the files it will write; a researcher or reviewer:
the file list, then the files the instruction and the list point to), then act by role. The role comes from
the offered tools. What a builder writes is decided by `choose_variant` (docs/sim-model.md).
"""

from __future__ import annotations

import math
import random
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from loopwright.errors import ConfigError
from loopwright.models._sim_landscape import LANDSCAPE_FAMILIES, draw_landscape
from loopwright.models._sim_policy import (
    REVIEW_CUES,
    Choice,
    Context,
    SimParams,
    choose_variant,
    guided_kinds,
    has_failing_feedback,
)
from loopwright.models._sim_study import files_to_study, parse_listing, study_notes
from loopwright.models._sim_task import TaskFacts, match_instruction
from loopwright.models._types import JsonValue, Message, ModelResponse, ToolCall, ToolSpec
from loopwright.models._usage import response_usage
from loopwright.tasks import Benchmark

__all__ = [
    "SIM_MODEL_NAME",
    "SimDecision",
    "SimModel",
    "SimOptions",
    "find_instruction_path",
    "parse_sim_spec",
    "sim_role",
]

SIM_MODEL_NAME = "sim-coder-1"
_INSTRUCTION_PATH = re.compile(r"[^\s'\"`()<>\[\]{},;]*instruction\.md")
_WRITE_TOOLS = ("write_file", "edit_file")
NO_TASK = "did not read the task"


@dataclass(frozen=True, slots=True)
class SimOptions:
    """Options of a `sim[:LANDSCAPE][?key=value&...]` model spec. `latency_s`: seconds every
    call sleeps before answering (default 0), so a simulated job spends time the way a real
    model call does (docs/sim-model.md). Latency changes timing only, never what the model
    says. `landscape`: the seed of the landscape (`sim:7`), None for the plain `sim`.
    `family`: the landscape family it is drawn from (`sim:7?family=2`; default 1)."""

    latency_s: float = 0.0
    landscape: int | None = None
    family: int = 1

    def params(self) -> SimParams:
        """The landscape's parameters: the defaults for plain `sim`, else drawn from its seed
        in its family."""
        if self.landscape is None:
            return SimParams()
        return draw_landscape(self.landscape, self.family)


def _landscape(name: str, spec: str) -> int | None:
    """The landscape seed of `sim:SEED` (None for `sim`). ConfigError when SEED is not an
    integer >= 0."""
    if name == "sim":
        return None
    seed = name.removeprefix("sim:")
    if not seed.isdigit():
        raise ConfigError(
            "a sim landscape is a whole number >= 0",
            got=spec,
            fix="write sim:SEED, e.g. sim:7 (or plain sim for the default landscape)",
        )
    return int(seed)


def parse_sim_spec(spec: str) -> SimOptions | None:
    """`sim`, `sim:7`, `sim?latency=0.05`, `sim:7?latency=0.05` or `sim:7?family=2` (options
    joined with `&`) -> its options; None for a spec that is not the sim.

    Raises ConfigError for an unknown option, a latency that is not a number >= 0, a
    landscape that is not a whole number, or a family that is unknown or given without a
    landscape seed.
    """
    name, sep, query = spec.strip().partition("?")
    if name != "sim" and not name.startswith("sim:"):
        return None
    landscape = _landscape(name, spec)
    latency, family = 0.0, 1
    for item in query.split("&") if sep else ():
        key, _, value = item.partition("=")
        if key == "latency":
            latency = _latency(value, spec)
        elif key == "family":
            family = _family(value, spec, landscape)
        else:
            raise ConfigError(
                f"unknown sim option {key!r}",
                got=spec,
                fix="the sim takes two options: latency=SECONDS and family=N "
                "(e.g. sim:7?latency=0.05 or sim:7?family=2)",
            )
    return SimOptions(latency_s=latency, landscape=landscape, family=family)


def _latency(value: str, spec: str) -> float:
    try:
        latency = float(value)
    except ValueError:
        latency = -1.0
    if not (math.isfinite(latency) and latency >= 0.0):
        raise ConfigError(
            "the sim's latency must be a number of seconds >= 0",
            got=spec,
            fix="write e.g. sim?latency=0.05",
        )
    return latency


def _family(value: str, spec: str, landscape: int | None) -> int:
    known = ", ".join(f"{n} ({name})" for n, name in LANDSCAPE_FAMILIES.items())
    if not value.isdigit() or int(value) not in LANDSCAPE_FAMILIES:
        raise ConfigError(
            f"unknown sim landscape family {value!r}",
            got=spec,
            fix=f"write family=N with N one of {known}, e.g. sim:7?family=2",
        )
    if landscape is None:
        raise ConfigError(
            "a landscape family needs a landscape seed",
            got=spec,
            fix="write sim:SEED?family=N, e.g. sim:7?family=2 (plain sim is in no family)",
        )
    return int(value)


def find_instruction_path(prompt: str) -> str | None:
    """The first path ending in `instruction.md` that the prompt names, or None."""
    match = _INSTRUCTION_PATH.search(prompt)
    return match.group(0) if match else None


def sim_role(tools: Sequence[str]) -> str:
    """The sim's role from the offered tool names: "builder" (write_file or edit_file),
    "researcher" (write_notes, no write tool), "reviewer" (other tools), or "judge" (no tools
    at all, as an LLM judge gate calls it)."""
    if not tools:
        return "judge"
    if any(t in tools for t in _WRITE_TOOLS):
        return "builder"
    return "researcher" if "write_notes" in tools else "reviewer"


@dataclass(frozen=True, slots=True)
class SimDecision:
    """What one episode did, for tests and debugging (never shown to a workflow or a grader).

    `variant` is "gold", a flawed variant's name, or None (nothing written)."""

    episode: int
    task_id: str | None
    role: str
    variant: str | None = None
    reason: str = ""  # a builder's Choice.reason, "did not read the task", "notes", "review"
    p_error: float = 0.0
    notes_coverage: float = 0.0
    guided: tuple[str, ...] = ()
    failing_feedback: bool = False


@dataclass
class _TaskState:
    """Per-run memory of one task: the RNG, and what this model wrote so far."""

    rng: random.Random
    last: str | None = None
    written: set[str] = field(default_factory=set)


_Act = ToolCall | str  # a tool call, or a final text reply


class _Episode:
    """One node invocation. Emitted actions are kept, so a repeated call is answered the same."""

    def __init__(self, sim: SimModel, number: int, prompt: str, tools: Sequence[str]) -> None:
        self.sim, self.number, self.prompt = sim, number, prompt
        self.tools = tuple(tools)
        self.role = sim_role(self.tools)
        self.emitted: list[_Act] = []
        self.queue: list[_Act] = []
        self.phase = "start"
        self.facts: TaskFacts | None = None
        self.instruction = ""  # the text its first read_file returned
        self.listing: tuple[str, ...] | None = None  # what list_files returned, when called
        self.reads: dict[str, str] = {}  # call id -> path read

    def act(self, messages: Sequence[Message]) -> _Act:
        """The action for this conversation: replayed if already emitted, else the next one."""
        turn = sum(m.role == "assistant" for m in messages)
        if turn < len(self.emitted):
            return self.emitted[turn]
        while not self.queue:
            self._advance(messages)
        action = self.queue.pop(0)
        self.emitted.append(action)
        return action

    def call(self, name: str, **arguments: JsonValue) -> ToolCall:
        """A tool call with an id unique in this model instance."""
        pending = len(self.emitted) + len(self.queue) + 1
        return ToolCall.make(f"sim-{self.number}-{pending}", name, **arguments)

    def offers(self, name: str) -> bool:
        return name in self.tools

    def _advance(self, messages: Sequence[Message]) -> None:
        if self.phase == "start" and self.role == "judge":
            self._judge()
        elif self.phase == "start":
            self.phase = "identify"
            path = find_instruction_path(self.prompt)
            if path is None or not self.offers("read_file"):
                self._no_task("the prompt names no instruction file")
            else:
                self.queue.append(self.call("read_file", path=path))
        elif self.phase == "identify":
            self._identify(messages)
        elif self.phase == "survey":
            self._survey(messages)
        elif self.phase == "gather":
            self.phase = "done"
            self.sim.act_by_role(self, messages)
        else:
            self.queue.append("Done.")

    def _identify(self, messages: Sequence[Message]) -> None:
        first = self.emitted[0]
        text = _result(messages, first.id) if isinstance(first, ToolCall) else None
        task = match_instruction(text or "", self.sim.benchmark)
        if task is None:
            self._no_task("the instruction file could not be read or matched")
            return
        self.facts = self.sim.facts(task.id)
        self.instruction = text or ""
        self.phase = "gather"
        if self.role == "builder" and self.offers("read_notes"):
            self.queue.append(self.call("read_notes"))
        if self.offers("list_files"):
            self.queue.append(self.call("list_files", path="."))
        if self.role == "builder":
            self._queue_reads(self._builder_reads())
        elif self.offers("list_files"):
            self.phase = "survey"  # choose what to read once the listing has arrived
        else:
            self._queue_reads(files_to_study(self.instruction, None))

    def _survey(self, messages: Sequence[Message]) -> None:
        """Read what the instruction and the listing point to (files_to_study)."""
        calls = [a for a in self.emitted if isinstance(a, ToolCall) and a.name == "list_files"]
        self.listing = parse_listing(_result(messages, calls[0].id)) if calls else None
        self.phase = "gather"
        self._queue_reads(files_to_study(self.instruction, self.listing))

    def _queue_reads(self, paths: Sequence[str]) -> None:
        for path in paths:
            read = self.call("read_file", path=path)
            self.reads[read.id] = path
            self.queue.append(read)

    def _builder_reads(self) -> list[str]:
        assert self.facts is not None
        if not self.offers("write_file"):
            return list(self.facts.repo)  # edit_file needs the current text of every file
        return [p for p in self.facts.changed if p in self.facts.repo]

    def _judge(self) -> None:
        """With no tools it can only judge by its prompt: FAIL when the prompt carries failing
        test output, else PASS (a lenient judge)."""
        self.phase = "done"
        failing = has_failing_feedback(self.prompt)
        verdict = (
            "FAIL\nThe prompt shows failing tests." if failing else "PASS\nNothing shows a failure."
        )
        self.queue.append(verdict)
        self.sim.record(SimDecision(self.number, None, "judge", reason=verdict.split()[0]))

    def _no_task(self, why: str) -> None:
        self.phase = "done"
        if self.offers("list_files"):
            self.queue.append(self.call("list_files", path="."))
        if self.role == "researcher":
            note = f"I could not find the task: {why}. No notes on the change."
            self.queue.append(self.call("write_notes", text=note))
        self.queue.append(self.finish(f"Stopped: {NO_TASK} ({why})."))
        self.sim.record(SimDecision(self.number, None, self.role, reason=NO_TASK))

    def finish(self, summary: str) -> _Act:
        """`finish(summary)` when offered, else the summary as a final text reply."""
        return self.call("finish", summary=summary) if self.offers("finish") else summary

    def read_text(self, messages: Sequence[Message]) -> dict[str, str]:
        """path -> the text the episode's read_file calls returned (files only; a read that
        failed, "error: ...", is left out)."""
        found = {}
        for call_id, path in self.reads.items():
            text = _result(messages, call_id)
            if text is not None and not text.startswith("error:"):
                found[path] = text
        return found

    def notes_read(self, messages: Sequence[Message]) -> str:
        """What the episode's read_notes calls returned, joined."""
        calls = [a for a in self.emitted if isinstance(a, ToolCall) and a.name == "read_notes"]
        return "\n".join(_result(messages, c.id) or "" for c in calls)


def _result(messages: Sequence[Message], call_id: str) -> str | None:
    for message in messages:
        if message.role == "tool" and message.tool_call_id == call_id:
            return message.content
    return None


class SimModel:
    """The offline simulated coding model ("sim"), reported as `sim-coder-1`, simulated=True.

    `SimModel(benchmark, seed, params, latency_s=0.0)`: one instance per run. It acts only
    through the tool calls it returns and the results it is sent: it never reads a workspace or
    the runner. A task's randomness is `random.Random(f"{seed}:{task_id}")`, so a run does not depend on
    which other tasks ran; the same seed, prompts, tools and tool results give the same calls.
    Every task of the benchmark it recognises must have a gold overlay (ValueError otherwise,
    on first use). Thread-safe (one lock), but meant for one run at a time. `latency_s` > 0
    makes every call sleep that long first (a stand-in for a real model's response time; it
    changes no decision); the reply's `latency_s` is the time measured around the sleep.
    """

    simulated: bool = True

    def __init__(
        self,
        benchmark: Benchmark,
        seed: int,
        params: SimParams | None = None,
        *,
        latency_s: float = 0.0,
    ) -> None:
        if not (math.isfinite(latency_s) and latency_s >= 0.0):
            raise ValueError(f"latency_s must be >= 0, got {latency_s!r}")
        self.name = SIM_MODEL_NAME
        self.latency_s = latency_s
        self.benchmark = benchmark
        self.seed = seed
        self.params = params if params is not None else SimParams()
        self.decisions: list[SimDecision] = []
        self._facts: dict[str, TaskFacts] = {}
        self._states: dict[str, _TaskState] = {}
        self._episodes: dict[tuple[str, ...], _Episode] = {}
        self._lock = threading.Lock()

    def chat(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> ModelResponse:
        """The next action of the episode this conversation belongs to (see the module doc)."""
        latency = 0.0
        if self.latency_s > 0.0:
            started = time.monotonic()
            time.sleep(self.latency_s)
            latency = time.monotonic() - started
        with self._lock:
            action = self._episode(messages, tools).act(messages)
        calls = (action,) if isinstance(action, ToolCall) else ()
        text = action if isinstance(action, str) else ""
        usage = response_usage(messages, text, calls)
        return ModelResponse(text, calls, usage, latency, self.name, simulated=True)

    def _episode(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> _Episode:
        head = _head(messages)
        episode = self._episodes.get(head)
        if episode is None or not any(m.role == "assistant" for m in messages):
            prompt = head[-1] if head else ""
            episode = _Episode(self, len(self._episodes) + 1, prompt, [t.name for t in tools])
            self._episodes[head] = episode
        return episode

    def facts(self, task_id: str) -> TaskFacts:
        """The sim's knowledge of a task (read from the task directory once)."""
        if task_id not in self._facts:
            self._facts[task_id] = TaskFacts.load(self.benchmark.task(task_id))
        return self._facts[task_id]

    def state(self, task_id: str) -> _TaskState:
        """This run's memory of a task: its RNG and what was written (created on first use)."""
        if task_id not in self._states:
            self._states[task_id] = _TaskState(random.Random(f"{self.seed}:{task_id}"))
        return self._states[task_id]

    def record(self, decision: SimDecision) -> None:
        """Append an episode's decision to `decisions` (for tests and debugging)."""
        self.decisions.append(decision)

    def act_by_role(self, episode: _Episode, messages: Sequence[Message]) -> None:
        """Queue the episode's role-specific actions, once its context is gathered."""
        facts = episode.facts
        assert facts is not None  # set by _identify before the "gather" phase
        _queue_extra_reads(episode, self.params.extra_reads.get(episode.role, 0))
        if episode.role == "builder":
            _build(self, episode, facts, messages)
            return
        if episode.role == "researcher":
            read = episode.read_text(messages)
            notes = study_notes(episode.instruction, episode.listing, read)
            episode.queue.append(episode.call("write_notes", text=notes))
            summary = f"Studied the task; read {len(read)} file(s) and wrote notes."
        else:
            if episode.offers("run_tests"):
                episode.queue.append(episode.call("run_tests"))
            summary = "Read the task and the files it concerns."
        episode.queue.append(episode.finish(summary))
        self.record(SimDecision(episode.number, facts.task.id, episode.role, reason=episode.role))


def _head(messages: Sequence[Message]) -> tuple[str, ...]:
    """The contents up to and including the first user message: the episode's identity."""
    head = []
    for message in messages:
        head.append(message.content)
        if message.role == "user":
            break
    return tuple(head)


def _queue_extra_reads(episode: _Episode, count: int) -> None:
    """`count` more turns re-reading the instruction (the landscape's `extra_reads` for the
    role): they cost tokens and change no decision."""
    first = episode.emitted[0] if episode.emitted else None
    if not isinstance(first, ToolCall) or first.name != "read_file":
        return
    for _ in range(count):
        episode.queue.append(episode.call("read_file", path=first.arguments()["path"]))


def _build(sim: SimModel, episode: _Episode, facts: TaskFacts, messages: Sequence[Message]) -> None:
    state = sim.state(facts.task.id)
    guidance = episode.prompt + "\n" + episode.notes_read(messages)
    files_read = episode.read_text(messages)
    ctx = Context(
        guidance=guidance,
        notes_coverage=facts.coverage(guidance),
        failing_feedback=has_failing_feedback(episode.prompt),
        previous=state.last,
        context_chars=len(guidance) + sum(len(t) for t in files_read.values()),
        review=any(cue in episode.prompt.lower() for cue in REVIEW_CUES),
    )
    choice = choose_variant(facts.task.level, facts.task.spec.flawed, ctx, sim.params, state.rng)
    files = {} if choice.reason == "keep" else facts.target_files(choice.variant, state.written)
    written = _queue_writes(episode, files, files_read)
    if written or choice.reason == "keep":
        state.last = choice.variant
        state.written |= set(written)
    if episode.offers("run_tests"):
        episode.queue.append(episode.call("run_tests"))
    changed = ", ".join(written) or "nothing"
    episode.queue.append(episode.finish(f"Implemented the change; files written: {changed}."))
    sim.record(_decision(episode, facts, choice, ctx, written))


def _queue_writes(episode: _Episode, files: dict[str, str], seen: dict[str, str]) -> list[str]:
    """Queue a write per file: write_file when offered, else edit_file replacing the text the
    episode read (a file it did not read, or a new file, cannot be written that way)."""
    written = []
    for path, content in files.items():
        if episode.offers("write_file"):
            episode.queue.append(episode.call("write_file", path=path, content=content))
        elif path in seen and seen[path] != content:
            episode.queue.append(episode.call("edit_file", path=path, old=seen[path], new=content))
        else:
            continue
        written.append(path)
    return written


def _decision(
    episode: _Episode, facts: TaskFacts, choice: Choice, ctx: Context, written: list[str]
) -> SimDecision:
    variant = choice.variant if written or choice.reason == "keep" else None
    return SimDecision(
        episode=episode.number,
        task_id=facts.task.id,
        role=episode.role,
        variant=variant,
        reason=choice.reason,
        p_error=choice.p_error,
        notes_coverage=ctx.notes_coverage,
        guided=tuple(sorted(k.value for k in guided_kinds(ctx.guidance))),
        failing_feedback=ctx.failing_feedback,
    )
