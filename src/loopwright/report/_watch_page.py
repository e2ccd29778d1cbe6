"""The live page of `loopwright report RUN --watch`: the run's report with a status bar on top
and one small inline script that polls the local watcher and swaps in the fresh report when
progress.jsonl changes. Everything is inline; the page's policy allows script only with this
page's nonce and connections only to the server that served it."""

from __future__ import annotations

import html
import json

from loopwright.report._html import esc

__all__ = ["LIVE_CSP", "live_page", "state_json"]

LIVE_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    "script-src 'nonce-{nonce}'; connect-src 'self'"
)

_STATIC_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

_CSS = """
#live-bar { position:sticky; top:0; z-index:10; display:flex; gap:14px; align-items:center;
  padding:8px 28px; font-weight:600; border-bottom:2px solid #999; background:#eef1f5; }
#live-bar[data-state="live"] { background:#e3f6e8; border-color:#2f855a; color:#1c4532; }
#live-bar[data-state="waiting"] { background:#e3f6e8; border-color:#2f855a; color:#1c4532; }
#live-bar[data-state="finished"] { background:#e6effc; border-color:#2454a6; color:#1a365d; }
#live-bar[data-state="interrupted"], #live-bar[data-state="gone"] { background:#fde8e8;
  border-color:#c53030; color:#742a2a; }
#live-bar[data-state="stopped"] { background:#eef1f5; border-color:#8a93a3; color:#4a5568; }
#live-bar .dot { width:10px; height:10px; border-radius:5px; background:currentColor; }
#live-bar[data-state="live"] .dot { animation: pulse 1.2s infinite; }
@keyframes pulse { 50% { opacity:0.2; } }
#live-bar button { margin-left:auto; font:inherit; padding:3px 12px; cursor:pointer; }
"""

_SCRIPT = """
(() => {
  const bar = document.getElementById('live-bar');
  const status = document.getElementById('live-status');
  const button = document.getElementById('stop-watch');
  const every = Number(bar.dataset.interval) * 1000;
  const token = document.currentScript.nonce;
  let timer = null, stopped = false;
  const show = (state, text) => { bar.dataset.state = state; status.textContent = text; };
  const swap = (doc) => {
    const open = new Map(Array.from(document.querySelectorAll('details[data-id]'))
      .map(d => [d.dataset.id, d.open]));
    for (const sel of ['header.top', 'main']) {
      const fresh = doc.querySelector(sel), old = document.querySelector(sel);
      if (fresh && old) old.replaceWith(document.adoptNode(fresh));
    }
    for (const d of document.querySelectorAll('details[data-id]')) {
      if (open.has(d.dataset.id)) d.open = open.get(d.dataset.id);
    }
  };
  const tick = async () => {
    if (stopped) return;
    try {
      const state = await (await fetch('/state', {cache: 'no-store'})).json();
      if (stopped) return;  // the Stop button was pressed while this check was on its way
      show(state.state, state.text);
      if (state.token !== bar.dataset.token) {
        const reply = await fetch('/report', {cache: 'no-store'});
        if (stopped) return;
        if (reply.ok) {
          swap(new DOMParser().parseFromString(await reply.text(), 'text/html'));
          bar.dataset.token = state.token;
          bar.dataset.updates = String(Number(bar.dataset.updates) + 1);
        } else {
          status.textContent += ' (the report could not be rendered: ' + await reply.text() + ')';
        }
      }
    } catch (err) {
      if (stopped) return;
      stopped = true;
      show('gone', 'The watcher is not answering (it was stopped): this page no longer refreshes.');
      button.disabled = true;
      return;
    }
    timer = setTimeout(tick, every);
  };
  button.addEventListener('click', async () => {
    stopped = true;
    clearTimeout(timer);
    button.disabled = true;
    try { await fetch('/stop', {method: 'POST', headers: {'X-Loopwright-Watch': token}}); } catch (err) { /* already gone */ }
    show('stopped', 'Stopped watching: the watcher has ended; the run itself goes on. '
      + 'Watch again with: loopwright report RUN --watch');
  });
  timer = setTimeout(tick, every);
})();
"""


def live_page(
    report_html: str, *, state: str, text: str, token: str, interval_s: float, nonce: str
) -> str:
    """`report_html` (a page from `render_report`) made live: its policy swapped for the live
    one (this `nonce`), the status bar (`#live-bar`, with `data-state`, `data-token` and
    `data-updates`) after `<body>`, the script before `</body>`."""
    csp = LIVE_CSP.format(nonce=nonce)
    out = report_html.replace(
        f'content="{_STATIC_CSP}"', f'content="{html.escape(csp, quote=True)}"', 1
    )
    head = f'<link rel="icon" href="data:,"><style>{_CSS}</style></head>'
    out = out.replace("</head>", head, 1)
    bar = (
        f'<div id="live-bar" role="status" data-state="{esc(state)}" data-token="{esc(token)}" '
        f'data-interval="{interval_s:g}" data-updates="0"><span class="dot"></span>'
        f'<span id="live-status">{esc(text)}</span>'
        '<button id="stop-watch" type="button" title="End the watcher (not the run)">'
        "Stop watching</button></div>"
    )
    out = out.replace("<body>", "<body>" + bar, 1)
    script = f'<script nonce="{esc(nonce)}">{_SCRIPT}</script></body>'
    return out.replace("</body>", script, 1)


def state_json(state: str, text: str, token: str, holder: int | None, events: int) -> bytes:
    """The body of `/state`."""
    payload = {"state": state, "text": text, "token": token, "holder": holder, "events": events}
    return json.dumps(payload).encode("utf-8")
