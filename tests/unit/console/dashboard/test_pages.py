"""The templates render without a server: a refused form keeps what was typed and shows each reason beside
its field, every page shares the sidebar, and only the package's own static files are served."""

from __future__ import annotations

from services.console.dashboard.bench_views import DiscoverFilters, discover_rows, queue_controls, queue_rows
from services.console.dashboard.pages import NAV, PAGES, static, templates


def test_a_refused_form_shows_each_reason_beside_its_field() -> None:
    html = templates().get_template("fragment.html").render(
        action="collection", fid="new-collection", shown={}, choices={"aliases": ["a"], "collections": []},
        values={"name": "core", "members": "zzz"},
        errors={"members": ["member 'zzz' is not a model on the bench"], "": ["try again"]})
    assert 'id="new-collection-members" name="members" type="text" value="zzz" aria-invalid="true"' in html
    assert '<p class="error" id="new-collection-members-error">member &#39;zzz&#39; is not a model' in html
    assert '<p class="error" role="alert">try again</p>' in html


def test_what_is_typed_is_escaped() -> None:
    html = templates().get_template("fragment.html").render(
        action="key", fid="k", shown={}, choices={}, values={"name": '"><script>x</script>'}, errors={})
    assert "<script>x" not in html and "&lt;script&gt;" in html


def test_a_secret_made_once_is_shown_in_the_result_only() -> None:
    html = templates().get_template("fragment.html").render(
        action="key", fid="k", values={}, errors={}, choices={},
        shown={"title": "Gateway key ci made", "secret": "bwk_abc", "lines": ["Copy it now"]})
    assert '<code class="secret">bwk_abc</code>' in html and "<form" not in html


def test_every_page_is_in_the_sidebar_once() -> None:
    assert len(PAGES) == len(set(PAGES)) == sum(len(pages) for _, pages in NAV)
    assert PAGES[0] == "/" and all(p.startswith("/ui/") for p in PAGES[1:])


def test_only_the_shipped_static_files_are_served() -> None:
    assert static("htmx.min.js").status_code == 200
    assert static("dash.css").media_type == "text/css"
    assert static("../pages.py").status_code == 404


def test_what_cannot_be_undone_asks_first_and_what_can_does_not() -> None:
    template = templates().get_template("fragment.html")
    html = {action: template.render(action=action, fid="f", shown={}, choices={},
                                    values={"name": "core", "alias": "a"}, errors={})
            for action in ("collection-remove", "key-revoke", "retire")}
    assert 'hx-confirm="Delete the collection core?' in html["collection-remove"]
    assert 'hx-confirm="Revoke the key core?' in html["key-revoke"]
    assert "hx-confirm" not in html["retire"]  # a retired model is restored from Action needed


def rendered(template: str, **values: object) -> str:
    base = {"title": "t", "nav": NAV, "path": "/", "here": "/", "live": True, "notes": [], "seq": 7,
            "choices": {"endpoints": [("fake", "fake")], "modes": [("full", "Full"), ("quick", "Quick")]}}
    return templates().get_template(template).render(**{**base, **values})


def test_the_onboarding_page_shows_each_item_an_onboard_stopped_issue_and_the_candidates() -> None:
    items = [{"served": "a/b", "endpoint": "fake", "mode": "quick", "state": "running", "step": 4,
              "alias": "b", "note": "", "attempts": 1},
             {"served": "c/d", "endpoint": "fake", "mode": "full", "state": "queued", "step": 0, "alias": "",
              "note": "", "attempts": 0}]
    issue = {"at": "2026-12-03T10:00:00", "served": "e/f", "endpoint": "fake", "alias": "f", "step": 4,
             "failure": "timeout", "detail": "4 of 4 probe calls unanswered"}
    found = {"candidates": [{"served": "g/h", "endpoint": "fake", "key": "g/h", "new": True}],
             "dismissed": [], "errors": ["other: its model list failed"]}
    html = rendered("onboarding.html", queue={"running": True, "stopping": False}, items=queue_rows(items),
                    issues=[issue], controls=queue_controls(items, False), candidates=found)
    assert '<tr data-served="a/b" data-state="running">' in html and "step 4 of 5: probe" in html
    assert "waiting its turn" in html and "Stop the queue" in html and "Clear the finished batch" not in html
    assert "e/f on fake</strong> (alias f) stopped at step 4" in html and "timeout" in html
    assert 'data-candidate="g/h"' in html and "other: its model list failed" in html
    assert 'data-seq="7"' in html  # where its live feed catches up from


def test_discover_offers_add_where_a_route_exists_and_says_why_not_elsewhere() -> None:
    rows = discover_rows([
        {"provider": "fake", "model": "a/b", "reach": "connected", "endpoints": ["fake"], "free": True,
         "new": True, "first_seen": "2026-12-01", "cost": None, "also_on": [], "context_window": 8000},
        {"provider": "far", "model": "c/d", "reach": "other", "endpoints": [], "free": True, "new": False,
         "cost": None, "also_on": ["d-elsewhere"], "context_window": None}], DiscoverFilters())
    html = rendered("discover.html", rows=rows, filters=DiscoverFilters(), prices=(("", "any"),),
                    reaches=("connected",), baseline=None, feeds=[], refreshed=None)
    assert html.count('data-action="discover-add"') == 1
    assert 'name="endpoint" value="fake"' in html and "new (2026-12-01)" in html
    assert "no endpoint of this bench reaches far" in html and "as d-elsewhere" in html
