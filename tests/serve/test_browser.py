"""`assay serve` in headless Chromium (Debian's, driven by playwright as the report tests do):
list runs, filter them, open a report, select two runs and get their overlay; hostile names
shown as text; a running run marked live. Screenshots go to $ASSAY_SCREENSHOTS when set."""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.report.test_browser import CHROMIUM, browser  # noqa: F401 - the shared fixture
from tests.serve.conftest import Served
from tests.serve.results import HOSTILE, HOSTILE_DESC, LIVE, RUNS

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed "
                                "(apt-get install chromium, or `make system`)")


class Tab:
    def __init__(self, page: Any, base: str):
        self.page, self.base = page, base
        page.set_default_timeout(60_000)  # a loaded machine renders slowly
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.outside: list[str] = []
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        page.on("request", lambda r: None if r.url.startswith(base) else
                self.outside.append(r.url))

    def go(self, path: str) -> Any:
        self.page.goto(self.base + path)
        self.page.wait_for_selector("body[data-rendered=true]")
        return self.page

    def rows(self) -> list[str]:
        ids: list[str] = self.page.eval_on_selector_all(
            "#runs tbody tr", "trs => trs.map(t => t.dataset.run)")
        return ids

    def shot(self, name: str) -> None:
        where = os.environ.get("ASSAY_SCREENSHOTS")
        if where:
            Path(where).mkdir(parents=True, exist_ok=True)
            self.page.screenshot(path=str(Path(where) / f"{name}.png"), full_page=True)


@pytest.fixture
def tab(browser: Any, served: Served) -> Iterator[Tab]:  # noqa: F811
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    t = Tab(page, served.url)
    yield t
    assert t.errors == [] and t.dialogs == [] and t.outside == []
    page.close()


def test_list_filter_and_open_a_report(tab: Tab, served: Served) -> None:
    page = tab.go("/")
    everything = [LIVE, *(r[0] for r in reversed(RUNS))]  # newest first
    assert tab.rows() == everything
    tab.shot("serve-list")
    # scenario: typed, submitted, kept in the URL (a filtered list can be shared)
    page.fill("#f-scenario", "btrfs")
    page.click("#apply")
    page.wait_for_selector("body[data-rendered=true]")
    assert "scenario=btrfs" in page.url
    assert tab.rows() == [RUNS[1][0], RUNS[0][0]]
    # platform, status and host are choices of what the results hold
    tab.go("/")
    page.select_option("#f-platform", "xfs")
    page.select_option("#f-status", "passed")
    page.click("#apply")
    page.wait_for_selector("body[data-rendered=true]")
    assert tab.rows() == [RUNS[2][0]]
    tab.go("/?host=node-a")
    assert tab.rows() == [RUNS[1][0], RUNS[0][0]]
    # a scenario field: compression (the data's compressibility) of 2
    tab.go("/")
    page.fill("#f-field", "compressibility")
    page.fill("#f-value", "2")
    page.click("#apply")
    page.wait_for_selector("body[data-rendered=true]")
    assert tab.rows() == [RUNS[1][0]]
    tab.shot("serve-filtered")
    # a date window: the runs 10 to 17 days old
    import datetime as dt
    today = dt.date.today()
    since, until = today - dt.timedelta(days=17), today - dt.timedelta(days=10)
    tab.go(f"/?since={since}&until={until}")
    assert tab.rows() == [RUNS[2][0], RUNS[1][0]]
    # open a report from the list
    tab.go("/")
    page.click(f'#runs tr[data-run="{RUNS[2][0]}"] a.open')
    page.wait_for_selector("body[data-rendered=true]")
    assert page.url.endswith(f"/runs/{RUNS[2][0]}/")
    assert page.inner_text("#verdict .verdict") == "PASSED"
    assert page.locator("#thresholds tbody tr").count() == 7
    tab.shot("serve-report")


def test_select_two_runs_and_overlay_them(tab: Tab) -> None:
    page = tab.go("/")
    assert page.is_disabled("#overlay")
    page.check(f'#runs tr[data-run="{RUNS[0][0]}"] input.pick')
    assert page.is_disabled("#overlay")  # one run is no overlay
    page.check(f'#runs tr[data-run="{RUNS[2][0]}"] input.pick')
    page.click("#overlay")
    page.wait_for_selector("body[data-rendered=true]")
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(page.url).query)
    assert q["run"] == [RUNS[2][0], RUNS[0][0]]  # the URL names the overlay
    text = page.inner_text("main")
    assert "xfs" in text and "btrfs" in text  # the configuration diff: platforms differ
    assert page.locator(".chart canvas").count() >= 4  # the charts
    assert page.locator("#serve-bar a", has_text="download this overlay").count() == 1
    tab.shot("serve-overlay")
    # the same address opened again is the same overlay
    again = tab.go(urllib.parse.urlsplit(page.url).path + "?" +
                   urllib.parse.urlsplit(page.url).query)
    # (all but the footer's "Generated by assay ... on <minute>", which may tick meanwhile)
    assert again.inner_text("main").split("Generated by")[0] == text.split("Generated by")[0]


def test_hostile_names_are_text_and_a_running_run_is_live(tab: Tab) -> None:
    page = tab.go("/")
    row = page.locator(f'#runs tr[data-run="{RUNS[3][0]}"]')
    assert row.locator("td.scenario a").inner_text() == HOSTILE
    assert HOSTILE_DESC in row.locator("td.scenario").inner_text()
    assert page.locator("#runs img").count() == 0
    live = page.locator(f'#runs tr[data-run="{LIVE}"] td.status')
    assert live.inner_text() == "running (live)"
    page.click("#records a")
    page.wait_for_selector("body[data-rendered=true]")
    assert HOSTILE in page.inner_text("h1")
    assert page.locator("#trials tbody tr").count() == 2
    tab.shot("serve-record")
    page = tab.go(f"/runs/{urllib.parse.quote(RUNS[3][0])}/")
    assert HOSTILE in page.inner_text("main") and page.locator("main img").count() == 0
    page = tab.go(f"/runs/{LIVE}/")
    assert page.locator('meta[http-equiv="refresh"]').count() == 1
    assert "live" in page.inner_text("#serve-bar")
    tab.shot("serve-live")
