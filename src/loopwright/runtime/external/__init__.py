"""External coding agents as agent loops (`loop: external:NAME`): the loop that runs an agent's
own CLI in the sandbox (`_loop`), the request and result types (`_types`), one adapter per agent
(Claude Code, Codex, mini-swe-agent, OpenHands) registered on import (`_agents`), and the
transcript parsing they share. See docs/external-agents.md."""
