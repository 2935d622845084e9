"""The dashboard in a real browser (issue 21): Playwright drives Debian's Chromium against a whole stack with
an admin token and two gateway replicas, from an empty data folder. A handful of flows (first run to a first
panel, editing a collection, a verdict from the Owed list, a plot of the real data points, login, a page on
one replica following a change made through the other), one axe sweep over every page, and screenshots of
each page at desktop and narrow widths in `test-artifacts/dashboard/` (gitignored). The flows run in file
order on one stack, as one person's session would: the first run makes what the later flows use.

Skips, saying why, when Playwright for Python or Chromium (`/usr/bin/chromium`) is missing: `make test`
installs both (pip and apt-get)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from cli.stack import Stack
from services.console.dashboard.pages import PAGES
from services.console.dashboard.plots import number
from shared.natsserver import free_port
from tests.e2e.conftest import CATALOG_PATHS, running
from tests.fakes.feeds import FeedServer, Reply
from tests.fakes.provider import FakeProvider

FROM_DEV = "is not installed (make test installs it with the dev dependencies)"
playwright_api = pytest.importorskip("playwright.sync_api", reason=f"Playwright for Python {FROM_DEV}")
axe_module = pytest.importorskip("axe_playwright_python.sync_playwright",
                                 reason=f"axe-playwright-python {FROM_DEV}")
expect = playwright_api.expect

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
TOKEN = "dashboard-admin-token-0123456789"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "dashboard"
WIDTHS = {"desktop": (1280, 900), "narrow": (390, 844)}
WAIT_MS = 20_000

if not CHROMIUM.exists():
    pytest.skip("Chromium is not installed at /usr/bin/chromium (make test installs Debian's `chromium` "
                "package with apt-get when it runs as root; else run `apt-get install -y chromium`)",
                allow_module_level=True)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, provider: FakeProvider,
          catalog_feeds: FeedServer) -> Iterator[Stack]:
    """An empty data folder, an admin token, two gateways; the catalog's feeds are local."""
    home = tmp_path_factory.mktemp("dashboard")
    feeds = {f"BENCH_CATALOG_{name.upper()}_URL": catalog_feeds.url(path)
             for name, path in CATALOG_PATHS.items()}
    stack = Stack(home=home, port=free_port(), replicas={"gateway": 2},
                  extra_env={"BENCHWARMERS_ADMIN_TOKEN": TOKEN, "BENCH_CATALOG_TIMEOUT_S": "5",
                             "BENCHWARMERS_KEY_FAKE": "sk-test-not-a-real-key", **feeds})
    with running(stack):
        yield stack


@pytest.fixture(scope="module")
def api(stack: Stack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=stack.url, headers={"authorization": f"Bearer {TOKEN}"}, timeout=60) as client:
        yield client


@pytest.fixture(scope="module")
def browser(stack: Stack) -> Iterator[Any]:
    """Started after the stack (sync Playwright holds an event loop in this thread, and the stack's start
    runs one of its own), closed before it."""
    with playwright_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


def signed_in(browser: Any, url: str) -> Any:
    """A new browser context signed in through the login form."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(url + "/")
    expect(page).to_have_url(re.compile(r"/login$"))
    page.get_by_label("Admin token").fill(TOKEN)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="At a glance")).to_be_visible(timeout=WAIT_MS)
    return page


@pytest.fixture(scope="module")
def page(browser: Any, stack: Stack) -> Iterator[Any]:
    page = signed_in(browser, stack.url)
    try:
        yield page
    finally:
        page.context.close()


def test_login_with_the_admin_token_and_refusal_without_it(browser: Any, stack: Stack) -> None:
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(stack.url + "/ui/collections")
        expect(page).to_have_url(re.compile(r"/login$"))
        page.get_by_label("Admin token").fill("not-the-token")
        page.get_by_role("button", name="Sign in").click()
        expect(page.locator("#login-error")).to_have_text("that is not the admin token")
        assert context.cookies() == []
        page.get_by_label("Admin token").fill(TOKEN)
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_role("heading", name="At a glance")).to_be_visible(timeout=WAIT_MS)
        (cookie,) = context.cookies()
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        assert TOKEN not in cookie["value"]
    finally:
        context.close()
    for path in ("/", "/ui/usage", "/ui/live"):
        assert httpx.get(stack.url + path).status_code == 303  # to /login, never the page


def test_cross_site_form_posts_are_refused(stack: Stack) -> None:
    cookie = httpx.post(stack.url + "/login", json={"token": TOKEN}).cookies
    body = {"name": "x-site", "members": "nobody"}
    with httpx.Client(base_url=stack.url, cookies=cookie) as client:
        evil = client.post("/ui/do/collection", json=body, headers={"origin": "http://evil.example"})
        cross = client.post("/ui/do/collection", json=body, headers={"sec-fetch-site": "cross-site"})
        form = client.post("/ui/do/collection", data=body)  # what a plain cross-site <form> sends
        assert (evil.status_code, cross.status_code, form.status_code) == (403, 403, 415)
        same = client.post("/ui/do/collection", json=body, headers={"origin": stack.url})
        assert same.status_code == 400 and "not a model on the bench" in same.text


def test_first_run_from_an_empty_data_folder_to_a_first_panel(page: Any, stack: Stack, provider: FakeProvider
                                                             ) -> None:
    page.goto(stack.url + "/")
    guide = page.locator("section.guide")
    expect(guide).to_contain_text("Add an endpoint")
    guide.get_by_label("Name").fill("fake")
    guide.get_by_label("Base URL").fill(provider.base_url)
    guide.get_by_role("button", name="Add endpoint").click()
    expect(guide.get_by_role("button", name="Add model")).to_be_visible(timeout=WAIT_MS)
    guide.get_by_label("Served model id").fill("ok-first")
    guide.get_by_role("button", name="Add model").click()
    expect(page.locator('tr[data-alias="ok-first"]')).to_be_visible(timeout=WAIT_MS)
    page.goto(stack.url + "/ui/models")  # the guide has moved on; more models are added on their page
    page.get_by_label("Served model id").fill("ok-second")
    page.get_by_role("button", name="Add model").click()
    expect(page.locator("main")).to_contain_text("ok-second", timeout=WAIT_MS)
    page.goto(stack.url + "/")
    guide.get_by_label("Name").fill("bad name!")
    guide.get_by_label("Members").fill("ok-first, ok-second")
    guide.get_by_role("button", name="Save collection").click()
    expect(guide.locator("#guide-collection-name-error")).to_contain_text("name must be", timeout=WAIT_MS)
    guide.get_by_label("Name").fill("first")
    guide.get_by_role("button", name="Save collection").click()
    expect(guide.get_by_label("Question")).to_be_visible(timeout=WAIT_MS)
    guide.get_by_label("Question").fill("Why is the sky blue?")
    guide.get_by_role("button", name="Ask the panel").click()
    expect(guide.locator(".result")).to_contain_text("2 of 2 seats answered", timeout=WAIT_MS)
    page.goto(stack.url + "/ui/collections")
    panel = page.locator("ul.panels > li").first
    expect(panel).to_contain_text("ok-first")
    expect(panel).to_contain_text("ok-second")
    page.goto(stack.url + "/")
    expect(page.locator("section.guide")).to_have_count(0)


def test_recording_a_verdict_from_the_owed_list_and_seeing_it_leave(page: Any, stack: Stack) -> None:
    page.goto(stack.url + "/ui/collections")
    owed = page.locator("ul.owed > li")
    expect(owed.first).to_be_visible(timeout=WAIT_MS)
    before = owed.count()
    call = owed.first.get_attribute("data-call")
    owed.first.get_by_role("button").click()
    dialog = page.locator("dialog#verdict")
    expect(dialog).to_be_visible(timeout=WAIT_MS)
    expect(dialog).to_contain_text("Why is the sky blue?")
    dialog.get_by_role("button", name="Record verdict").click()
    expect(dialog.locator(".error")).to_contain_text("useful")  # refused beside the field, nothing recorded
    dialog.get_by_label("Useful", exact=True).check()
    dialog.get_by_label("Note").fill("clear and short")
    dialog.get_by_role("button", name="Record verdict").click()
    expect(page.locator(f'ul.owed > li[data-call="{call}"]')).to_have_count(0, timeout=WAIT_MS)
    assert page.locator("ul.owed > li").count() == before - 1


def test_editing_a_collection(page: Any, stack: Stack, api: httpx.Client) -> None:
    page.goto(stack.url + "/ui/collections")
    entry = page.locator('details[data-collection="first"]')
    entry.locator("summary").click()
    members = entry.get_by_label("Members")
    members.fill("ok-first, nobody-here")
    entry.get_by_role("button", name="Save collection").click()
    expect(entry.locator("#edit-first-members-error")).to_contain_text("nobody-here", timeout=WAIT_MS)
    entry.get_by_label("Members").fill("ok-second, ok-first")
    entry.get_by_label("Reply mode").select_option("merged")
    entry.get_by_label("Merger").fill("ok-second")
    entry.get_by_role("button", name="Save collection").click()
    expect(page.locator('details[data-collection="first"] summary')).to_contain_text("merger ok-second",
                                                                                     timeout=WAIT_MS)
    (saved,) = [c for c in api.get("/api/collections").json()["collections"] if c["name"] == "first"]
    assert (saved["members"], saved["reply"], saved["merger"]) == (["ok-second", "ok-first"], "merged",
                                                                   "ok-second")


def test_a_stale_page_acting_on_a_removed_collection_is_told_so(page: Any, stack: Stack,
                                                                api: httpx.Client) -> None:
    assert api.post("/api/collection", json={"name": "doomed", "members": ["ok-first"]}).status_code == 200
    page.goto(stack.url + "/ui/collections")
    assert api.post("/api/collection/remove", json={"name": "doomed"}).status_code == 200
    entry = page.locator('details[data-collection="doomed"]')
    entry.locator("summary").click()
    page.once("dialog", lambda dialog: dialog.accept())  # "Delete the collection doomed?"
    entry.get_by_role("button", name="Delete doomed").click()
    expect(entry).to_contain_text("This page is out of date", timeout=WAIT_MS)


def test_a_plot_shows_the_real_data_points(page: Any, stack: Stack, api: httpx.Client) -> None:
    rows = api.get("/api/usage", params={"limit": 1000}).json()["rows"]
    assert rows, "the first-run panel made provider calls"
    page.goto(stack.url + "/ui/usage")
    latency = page.locator("#plot-3 svg")
    expect(latency).to_be_visible()
    marks = latency.locator("circle")
    assert marks.count() == len(rows)
    shown = sorted(marks.nth(i).locator("title").text_content() or "" for i in range(marks.count()))
    for row in rows:
        label = f": {number(row['seconds'])} s"
        assert any(s.startswith(row["alias"]) and label in s for s in shown), (row, shown)
    calls = page.locator("#plot-1 svg circle")
    assert calls.count() == len(rows)


def test_a_page_on_one_replica_follows_a_change_made_through_the_other(browser: Any, stack: Stack,
                                                                       api: httpx.Client) -> None:
    port_a, port_b = stack.gateway_ports
    page = signed_in(browser, f"http://127.0.0.1:{port_b}")
    try:
        page.goto(f"http://127.0.0.1:{port_b}/")
        expect(page.locator('tr[data-alias="ok-live"]')).to_have_count(0)
        made = httpx.post(f"http://127.0.0.1:{port_a}/api/models",
                          json={"served": "ok-live", "endpoint": "fake"},
                          headers={"authorization": f"Bearer {TOKEN}"}, timeout=60)
        assert made.status_code == 200
        expect(page.locator('tr[data-alias="ok-live"]')).to_be_visible(timeout=WAIT_MS)  # no reload: SSE
        assert page.evaluate("document.body.dataset.lastChange")  # what the bus said changed
    finally:
        page.context.close()


def test_action_needed_retry_clears_an_alert_and_a_retired_model_is_restored(page: Any, stack: Stack,
                                                                            api: httpx.Client) -> None:
    alert = {"key": "model:pending:ok-second", "kind": "retiring", "message": "ok-second retires in 3 days",
             "action": "retry it", "alias": "ok-second"}
    assert api.post("/api/alerts", json=alert).status_code == 200
    page.goto(stack.url + "/")
    actions = page.locator("#live-actions")
    expect(actions).to_contain_text("ok-second retires in 3 days")
    actions.get_by_role("button", name="Retry ok-second").click()
    expect(actions).to_contain_text("It answered. Its alert is cleared.", timeout=WAIT_MS)
    assert api.get("/api/alerts").json()["alerts"] == []
    page.goto(stack.url + "/ui/models")
    page.get_by_role("button", name="Retire ok-live").click()
    expect(page.locator("main")).not_to_contain_text("ok-live", timeout=WAIT_MS)
    page.goto(stack.url + "/")
    actions.get_by_role("button", name="Restore ok-live").click()
    expect(page.locator('tr[data-alias="ok-live"]')).to_contain_text("untested", timeout=WAIT_MS)
    expect(page.locator("#live-actions")).not_to_contain_text("Restore ok-live")


def queue_row(page: Any, served: str) -> Any:
    return page.locator(f'#live-queue tr[data-served="{served}"]')


def test_onboarding_a_model_from_its_page_shows_its_progress_live(page: Any, stack: Stack,
                                                                  provider: FakeProvider) -> None:
    """Queued from the form (an unlisted id refused beside the field with its near match), the item's steps
    reach the open page over the live feed: the page never reloads."""
    served = "vendor/dash-onboard"
    provider.set_model(served, latency_ms=700)  # four probe calls: the item is seen running, then done
    provider.set_model("vendor/dash-candidate")
    page.goto(stack.url + "/ui/onboarding")
    page.evaluate("window.stillThisPage = true")
    form = page.locator("form#onboard")
    form.get_by_label("Served model id(s)").fill("vendor/dash-onboar")
    form.get_by_label("Mode", exact=True).select_option("quick-adhoc")
    form.get_by_role("button", name="Queue for onboarding").click()
    expect(page.locator("#onboard-served-error")).to_contain_text(
        f"near matches: {served}", timeout=WAIT_MS)
    page.locator("form#onboard").get_by_label("Served model id(s)").fill(served)
    page.locator("form#onboard").get_by_role("button", name="Queue for onboarding").click()
    expect(page.locator("#onboard.result")).to_contain_text("Queued 1 for onboarding", timeout=WAIT_MS)
    expect(queue_row(page, served)).to_have_attribute("data-state", "running", timeout=WAIT_MS)
    expect(queue_row(page, served)).to_contain_text("step ")
    expect(queue_row(page, served)).to_have_attribute("data-state", "done", timeout=60_000)
    expect(queue_row(page, served)).to_contain_text("dash-onboard")  # its alias
    assert page.evaluate("window.stillThisPage") is True  # no reload: the progress came over /ui/live
    assert page.evaluate("document.body.dataset.lastChange")

    page.goto(stack.url + "/ui/onboarding")
    candidate = page.locator('tr[data-candidate="vendor/dash-candidate"]')
    expect(candidate).to_be_visible(timeout=WAIT_MS)
    expect(page.locator('tr[data-candidate="vendor/dash-onboard"]')).to_have_count(0)  # on the bench now
    candidate.get_by_role("button", name="Dismiss").click()
    expect(page.locator('tr[data-candidate="vendor/dash-candidate"]')).to_have_count(0, timeout=WAIT_MS)
    expect(page.locator("details", has_text="Dismissed")).to_contain_text("vendor/dash-candidate")
    page.get_by_role("button", name="Clear the finished batch").click()
    expect(page.locator("#queue-state")).to_have_text("Nothing queued.", timeout=WAIT_MS)


def models_dev_feed(models: dict[str, dict[str, Any]]) -> bytes:
    """models.dev's shape: `fake` (this bench's endpoint's name) and `faraway` (no endpoint reaches it)."""
    def entry(served: str, price: float) -> dict[str, Any]:
        return {"id": served, "name": served, "tool_call": True, "attachment": False,
                "modalities": {"input": ["text"], "output": ["text"]},
                "cost": {"input": price, "output": price}, "limit": {"context": 32000, "output": 4000}}
    return json.dumps({provider: {"id": provider, "name": provider, "npm": "@ai-sdk/openai-compatible",
                                  "api": "http://127.0.0.1:9/v1",
                                  "models": {m: entry(m, price) for m, price in served.items()}}
                       for provider, served in models.items()}).encode()


def test_discover_adds_a_model_through_the_endpoint_that_reaches_it(page: Any, stack: Stack,
                                                                    provider: FakeProvider,
                                                                    catalog_feeds: FeedServer) -> None:
    served = "vendor/dash-disc"
    provider.set_model(served)
    catalog_feeds.replies[CATALOG_PATHS["models_dev"]] = Reply(models_dev_feed(
        {"fake": {served: 0.0, "vendor/dash-paid": 2.0}, "faraway": {"far/free-model": 0.0}}))
    page.goto(stack.url + "/ui/discover")
    page.get_by_role("button", name="Refresh the catalog now").click()
    row = page.locator(f'tr[data-model="{served}"]')
    expect(row).to_contain_text("connected", timeout=60_000)
    expect(page.locator('tr[data-feed="models.dev"]')).to_contain_text("none")  # its last error
    far = page.locator('tr[data-model="far/free-model"]')
    expect(far).to_contain_text("no endpoint of this bench reaches faraway")
    expect(far.get_by_role("button")).to_have_count(0)
    page.get_by_label("Price").select_option("paid")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator('tr[data-model="vendor/dash-paid"]')).to_contain_text("$2 in, $2 out per M tokens")
    expect(row).to_have_count(0)
    page.get_by_label("Price").select_option("free")
    page.get_by_role("button", name="Filter").click()
    row.get_by_label("Mode", exact=True).select_option("quick-adhoc")
    row.get_by_role("button", name=re.compile("^Add")).click()
    expect(row.locator(".result")).to_contain_text(f"{served} on fake", timeout=WAIT_MS)
    page.goto(stack.url + "/ui/onboarding")
    expect(queue_row(page, served)).to_have_attribute("data-state", "done", timeout=60_000)
    page.goto(stack.url + "/ui/discover")
    expect(page.locator(f'tr[data-model="{served}"]')).to_contain_text("on bench", timeout=WAIT_MS)
    page.goto(stack.url + "/?price=free")  # At a glance's price filter reads the cost the catalog gave it
    expect(page.locator('tr[data-alias="dash-disc"]')).to_contain_text("free")
    expect(page.locator('tr[data-alias="ok-first"]')).to_have_count(0)  # no price known


def test_a_models_facts_are_set_and_cleared_from_the_models_page(page: Any, stack: Stack,
                                                                api: httpx.Client) -> None:
    page.goto(stack.url + "/ui/models")
    entry = page.locator('details[data-facts="ok-first"]')
    cells = entry.locator('tr[data-fact="context_window"] td')
    entry.locator("summary").click()
    entry.get_by_label("Context window").fill("lots")
    entry.get_by_role("button", name="Set facts of ok-first").click()
    expect(entry.locator("#facts-ok-first-context_window-error")).to_contain_text("whole number",
                                                                                  timeout=WAIT_MS)
    entry.get_by_label("Context window").fill("32000")
    entry.get_by_label("Tools").select_option("yes")
    entry.get_by_role("button", name="Set facts of ok-first").click()
    expect(cells.nth(0)).to_have_text("32,000", timeout=WAIT_MS)  # the page reloaded with it
    expect(cells.nth(1)).to_have_text("you")
    entry.locator("summary").click()
    facts = {f["fact"]: f for f in api.get("/api/model/facts", params={"alias": "ok-first"}).json()["facts"]}
    assert (facts["context_window"]["value"], facts["tools"]["source"]) == (32000, "you")
    entry.get_by_role("button", name="Clear ok-first's context window").click()
    expect(cells.nth(1)).not_to_have_text("you", timeout=WAIT_MS)
    facts = {f["fact"]: f for f in api.get("/api/model/facts", params={"alias": "ok-first"}).json()["facts"]}
    assert facts["context_window"]["source"] != "you" and facts["tools"]["source"] == "you"


def test_action_needed_folds_for_12_hours_until_a_new_alert(page: Any, stack: Stack,
                                                            api: httpx.Client) -> None:
    first = {"key": "model:pending:ok-second", "kind": "retiring", "message": "ok-second retires in 2 days",
             "action": "retry it", "alias": "ok-second"}
    assert api.post("/api/alerts", json=first).status_code == 200
    page.goto(stack.url + "/")
    actions = page.locator("#live-actions")
    actions.get_by_role("button", name="Fold for 12 hours").click()
    expect(actions.locator("ul.actions")).to_be_hidden()
    expect(actions.locator(".folded-note")).to_contain_text("folded until")
    page.reload()
    expect(actions.locator("ul.actions")).to_be_hidden()  # kept in this browser
    second = {**first, "key": "model:pending:dash-onboard", "alias": "dash-onboard",
              "message": "dash-onboard retires in 2 days"}
    assert api.post("/api/alerts", json=second).status_code == 200
    expect(actions.locator("ul.actions")).to_contain_text("dash-onboard retires", timeout=WAIT_MS)  # live
    expect(actions.locator(".folded-note")).to_be_hidden()
    for alert in (first, second):
        assert api.delete(f"/api/alerts/{alert['key']}").status_code == 200


def test_no_page_has_a_serious_accessibility_violation_and_each_is_photographed(page: Any, stack: Stack,
                                                                              api: httpx.Client) -> None:
    alert = {"key": "model:pending:ok-first", "kind": "retiring", "message": "ok-first retires in 5 days",
             "action": "retry it", "alias": "ok-first"}
    assert api.post("/api/alerts", json=alert).status_code == 200  # Action needed shows its buttons
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    ARTIFACTS.mkdir(parents=True)
    axe = axe_module.Axe()
    found: dict[str, list[str]] = {}
    for path in ("/login", *PAGES):
        target = page
        if path == "/login":
            target = page.context.browser.new_context().new_page()
        name = path.strip("/").replace("/", "-") or "glance"
        for width, (w, h) in WIDTHS.items():
            target.set_viewport_size({"width": w, "height": h})
            target.goto(stack.url + path)
            expect(target.locator("h1")).to_be_visible()
            target.screenshot(path=str(ARTIFACTS / f"{name}-{width}.png"), full_page=True)
        if path == "/ui/models":  # a model's facts, with their form, open
            target.locator("details.facts summary").first.click()
            target.screenshot(path=str(ARTIFACTS / "facts-narrow.png"))
        if path == "/ui/collections":  # the verdict dialog is part of the page that opens it
            target.locator("ul.owed > li button").first.click()
            expect(target.locator("dialog#verdict")).to_be_visible(timeout=WAIT_MS)
            target.screenshot(path=str(ARTIFACTS / "verdict-dialog-narrow.png"))
        results = axe.run(target)
        bad = [f"{v['id']} ({v['impact']}): {v['help']}" for v in results.response["violations"]
               if v["impact"] in ("serious", "critical")]
        if bad:
            found[path] = bad
        if target is not page:
            target.context.close()
    assert found == {}, found
    assert len(list(ARTIFACTS.glob("*.png"))) == 2 * (len(PAGES) + 1) + 2
