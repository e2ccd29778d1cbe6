"""Search bookkeeping: the time per novelty check, archive insert and checkpoint write.

Builds a synthetic lineage the way a run grows one (seeded): starting from the built-in
workflows and the two designs, each new individual is a random edit of a random earlier one
(half prompt edits: a word replaced, a sentence added or removed; half structural: a node
added or removed, a model tier or loop changed, a gate added or removed) with random
training results. With 100, 1,000 and 10,000 individuals remembered / inserted it times:
  novelty check     NoveltyFilter.check of a fresh child (threshold 0.1)
  archive insert    MapElitesArchive.add (default descriptors, 50 cells)
  checkpoint write  archive.to_json() written to a temp file, then os.replace (no fsync)
and prints how each grows from one size to the next (10x individuals; linear growth is 10x).
Target (issue 4): each under 10 ms at 10,000, growing no faster than linearly.

    python bench/search_bookkeeping.py [--seed 0] [--probes 300]
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from loopwright.search._archive import MapElitesArchive, default_descriptors
from loopwright.search._designer import design
from loopwright.search._individual import Individual, Lineage, TaskResult
from loopwright.search._novelty import NoveltyFilter
from loopwright.workflow import AgentNode, Edge, GateNode, Workflow, builtin_workflow

SIZES = (100, 1_000, 10_000)
_SENTENCES = (
    "Re-read the instruction before you finish.",
    "Prefer small, focused edits.",
    "Check every error case the instruction names.",
    "Keep the public names exactly as the instruction gives them.",
    "Write down what you learned with write_notes.",
)


def _library() -> list[AgentNode]:
    nodes = [n for n in builtin_workflow("thorough").nodes if isinstance(n, AgentNode)]
    return [n for n in nodes if n.role != "builder"]


def _edit_prompt(prompt: str, rng: random.Random) -> str:
    words = prompt.split(" ")
    choice = rng.random()
    if choice < 0.4:
        i = rng.randrange(len(words))
        words[i] = rng.choice(("carefully", "exactly", "always", "first", "then", "briefly"))
        return " ".join(words)
    if choice < 0.8:
        return prompt.rstrip() + "\n" + rng.choice(_SENTENCES) + f" (v{rng.randrange(10**6)})"
    lines = prompt.splitlines()
    del lines[rng.randrange(len(lines))]
    return "\n".join(lines)


def _chain(agents: list[AgentNode], gate: bool) -> Workflow:
    ids = [a.id for a in agents]
    edges = [Edge(source=a, target=b) for a, b in itertools.pairwise(ids)]
    nodes: list[AgentNode | GateNode] = list(agents)
    if gate:
        target = next((a.id for a in agents if a.role == "builder"), ids[-1])
        nodes.append(GateNode(id="gate_verify", check="visible_tests_pass", reloop_to=target))
        edges.append(Edge(source=ids[-1], target="gate_verify"))
    return Workflow(name="bench", nodes=tuple(nodes), edges=tuple(edges))


def _mutate(wf: Workflow, rng: random.Random, library: list[AgentNode]) -> Workflow:
    agents = [n for n in wf.nodes if isinstance(n, AgentNode)]
    gate = any(isinstance(n, GateNode) for n in wf.nodes)
    roll = rng.random()
    i = rng.randrange(len(agents))
    if roll < 0.5:
        agents[i] = agents[i].model_copy(update={"prompt": _edit_prompt(agents[i].prompt, rng)})
    elif roll < 0.65:
        extra = rng.choice(library)
        taken = {a.id for a in agents}
        new_id = next(f"{extra.id}_{k}" for k in range(100) if f"{extra.id}_{k}" not in taken)
        agents.insert(i, extra.model_copy(update={"id": new_id}))
    elif roll < 0.75 and len(agents) > 1 and agents[i].role != "builder":
        del agents[i]
    elif roll < 0.9:
        field, values = rng.choice(
            (("model", ("small", "medium", "large")), ("loop", ("react", "plan_execute", "hybrid")))
        )
        agents[i] = agents[i].model_copy(update={field: rng.choice(values)})
    else:
        gate = not gate
    return _chain(agents, gate)


def _individual(index: int, wf: Workflow, rng: random.Random) -> Individual:
    results = tuple(
        TaskResult(
            task_id=f"task-{t}",
            repetition=0,
            split="train",
            score=rng.random(),
            resolved=rng.random() < 0.5,
            invalid=False,
            failure_category="none",
            cost_usd=rng.uniform(0.0, 0.3),
            duration_s=rng.uniform(1, 100),
            gate_loops=rng.randrange(3),
            record_path=f"runs/x/{index}/{t}",
        )
        for t in range(5)
    )
    return Individual(
        id=f"ind{index:06d}",
        generation=index // 10,
        workflow=wf,
        lineage=Lineage(operator="bench"),
        results=results,
    )


def population(n: int, seed: int) -> list[Individual]:
    """`n` synthetic individuals, each an edit of a random earlier one (seeded)."""
    rng = random.Random(seed)
    library = _library()
    starts = [
        builtin_workflow(name) for name in ("builder-only", "research-build-verify", "thorough")
    ]
    starts += [design(kind, starts[0]) for kind in ("minimal", "thorough")]
    workflows = list(starts)
    while len(workflows) < n:
        workflows.append(_mutate(rng.choice(workflows), rng, library))
    return [_individual(i, wf, rng) for i, wf in enumerate(workflows[:n])]


def _ms(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.fmean(times), times[int(0.95 * (len(times) - 1))]


def measure(size: int, seed: int, probes: int, folder: Path) -> dict[str, tuple[float, float]]:
    """Mean and p95 milliseconds of each operation with `size` individuals in."""
    pop = population(size + probes, seed)
    known, fresh = pop[:size], pop[size:]
    novelty, archive = NoveltyFilter(0.1), MapElitesArchive(default_descriptors())
    for ind in known:
        novelty.remember(ind)
        archive.add(ind)
    children = iter(fresh * 2)
    verdicts = []
    check = _ms(lambda: verdicts.append(novelty.check(next(children).workflow)), probes)
    rejected = sum(not v.accepted for v in verdicts)
    inserts = iter(fresh * 2)
    insert = _ms(lambda: archive.add(next(inserts)), probes)
    target = folder / "archive.json"

    def write() -> None:
        tmp = target.with_name(f".{target.name}.tmp")
        tmp.write_text(archive.to_json(), encoding="utf-8")
        tmp.replace(target)  # os.replace: atomic on POSIX

    write_ms = _ms(write, max(20, probes // 10))
    print(
        f"{size:>7,} individuals  novelty check {check[0]:7.3f} ms (p95 {check[1]:6.3f})"
        f"  archive insert {insert[0]:7.4f} ms (p95 {insert[1]:6.4f})"
        f"  checkpoint write {write_ms[0]:6.3f} ms (p95 {write_ms[1]:6.3f}, "
        f"{len(archive)} elites, {target.stat().st_size / 1024:.0f} KiB)"
        f"  [{rejected}/{len(verdicts)} children rejected]"
    )
    return {"novelty check": check, "archive insert": insert, "checkpoint write": write_ms}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--probes", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = {size: measure(size, args.seed, args.probes, Path(tmp)) for size in SIZES}
    print("growth per 10x individuals (mean time ratio; linear = 10x):")
    for op in ("novelty check", "archive insert", "checkpoint write"):
        ratios = [rows[b][op][0] / rows[a][op][0] for a, b in itertools.pairwise(SIZES)]
        steps = ", ".join(
            f"{a:,}->{b:,}: {r:.2f}x"
            for (a, b), r in zip(itertools.pairwise(SIZES), ratios, strict=True)
        )
        verdict = "ok" if rows[SIZES[-1]][op][0] < 10 and all(r <= 10 for r in ratios) else "MISSED"
        print(f"  {op:<17} {steps}  [{verdict}: {rows[SIZES[-1]][op][0]:.3f} ms at {SIZES[-1]:,}]")


if __name__ == "__main__":
    main()
