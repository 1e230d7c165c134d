"""Pages of the results browser: the report's own stylesheet and chart code, inline, with
serve.js drawing the lists; data travels as inert JSON (report/html.safe_json) and reaches
the page through textContent only, as in the reports."""

from __future__ import annotations

import html
from importlib import resources
from typing import Any

from assay import __version__
from assay.report.html import asset, safe_json

LIVE_REFRESH_S = 5


def _serve_js() -> str:
    text = resources.files("assay.serve").joinpath("assets", "serve.js").read_text("utf-8")
    if "</script" in text.lower():
        raise ValueError("serve.js contains </script")
    return text


def page(title: str, data: dict[str, Any]) -> str:
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<meta name=\"generator\" content=\"assay {html.escape(__version__)}\">\n"
        f"<title>{html.escape(title)}</title>\n<style>\n{asset('report.css')}</style>\n"
        "</head>\n<body>\n<main id=\"app\"><noscript>This page draws its tables with "
        "JavaScript; please enable it.</noscript></main>\n"
        f"<script type=\"application/json\" id=\"assay-data\">{safe_json(data)}</script>\n"
        f"<script>\n{asset('charts.js')}</script>\n<script>\n{_serve_js()}</script>\n"
        "</body>\n</html>\n")


def with_bar(document: str, links: list[tuple[str, str]], note: str = "",
             refresh: bool = False) -> str:
    """A report or comparison page with the browser's bar on top (and, for a run still
    going, a refresh every few seconds). Links and note are escaped here."""
    items = " · ".join(f'<a href="{html.escape(href)}">{html.escape(text)}</a>'
                       for href, text in links)
    if note:
        items += f' <span class="serve-note">{html.escape(note)}</span>'
    bar = ('<nav id="serve-bar" style="font:14px system-ui,sans-serif;padding:6px 12px;'
           f'background:#eef2f7;border-bottom:1px solid #cbd5e1">{items}</nav>\n')
    out = document.replace("<body>\n", "<body>\n" + bar, 1)
    if refresh:
        out = out.replace("<head>\n", f'<head>\n<meta http-equiv="refresh" '
                                      f'content="{LIVE_REFRESH_S}">\n', 1)
    return out
