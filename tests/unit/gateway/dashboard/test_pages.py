"""The templates render without a server: a refused form keeps what was typed and shows each reason beside
its field, every page shares the sidebar, and only the package's own static files are served."""

from __future__ import annotations

from services.gateway.dashboard.pages import ENV, NAV, PAGES, static


def test_a_refused_form_shows_each_reason_beside_its_field() -> None:
    html = ENV.get_template("fragment.html").render(
        action="collection", fid="new-collection", shown={}, choices={"aliases": ["a"], "collections": []},
        values={"name": "core", "members": "zzz"},
        errors={"members": ["member 'zzz' is not a model on the bench"], "": ["try again"]})
    assert 'id="new-collection-members" name="members" type="text" value="zzz" aria-invalid="true"' in html
    assert '<p class="error" id="new-collection-members-error">member &#39;zzz&#39; is not a model' in html
    assert '<p class="error" role="alert">try again</p>' in html


def test_what_is_typed_is_escaped() -> None:
    html = ENV.get_template("fragment.html").render(
        action="key", fid="k", shown={}, choices={}, values={"name": '"><script>x</script>'}, errors={})
    assert "<script>x" not in html and "&lt;script&gt;" in html


def test_a_secret_made_once_is_shown_in_the_result_only() -> None:
    html = ENV.get_template("fragment.html").render(
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
    template = ENV.get_template("fragment.html")
    html = {action: template.render(action=action, fid="f", shown={}, choices={},
                                    values={"name": "core", "alias": "a"}, errors={})
            for action in ("collection-remove", "key-revoke", "retire")}
    assert 'hx-confirm="Delete the collection core?' in html["collection-remove"]
    assert 'hx-confirm="Revoke the key core?' in html["key-revoke"]
    assert "hx-confirm" not in html["retire"]  # a retired model is restored from Action needed
