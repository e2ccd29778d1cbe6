"""The open-network warning of a report: external agents that ran with the network open.

An external agent's visit keeps its network plan as `network` in its exhaust record
(`<run>/.../external/<node>.<attempt>.json`, docs/external-agents.md, "Network"); `open: <why>`
means it could reach the web (the local sandbox, or an endpoint loopwright cannot tunnel to
alone). A page shows a banner saying how many visits of which agents ran so, and why.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["open_network_text"]


def open_network_text(run_dir: Path) -> str | None:
    """The banner's text when any external agent's visit under `run_dir` ran with an open
    network, else None. Unreadable records are skipped (a report never fails on them).
    Deterministic for the same files."""
    agents: set[str] = set()
    reasons: set[str] = set()
    visits = 0
    for path in sorted(run_dir.glob("**/external/*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue
        network = record.get("network") if isinstance(record, dict) else None
        if not isinstance(network, str) or not network.startswith("open"):
            continue
        visits += 1
        agents.add(str(record.get("agent", "?")))
        reasons.add(network.removeprefix("open").lstrip(": ") or "no reason recorded")
    if not visits:
        return None
    return (
        f"OPEN NETWORK: {visits} visit(s) of external agents ({', '.join(sorted(agents))}) "
        f"could reach the web ({'; '.join(sorted(reasons))}). Their results may use answers "
        "found online; run them under --sandbox bubblewrap or docker to limit them to their "
        "model endpoint."
    )
