"""Every page of the built site, as a reader sees it at 1280 x 800 in Chromium.

For each page (of the test's own small build, or of the whole book with BOOK_SITE=_build/html):
no JavaScript or console error, no local file that fails to load, no request leaving the site, no code
block or printed output wider than its column (folded cells unfolded first), every image with alt text
and drawn, and every static widget showing another picture once its control is moved. One browser
visits the pages in turn; the failure message lists the problems page by page, and the same report is
written to tests/artifacts/site_audit.json.
"""
import json
import time

import pytest

from test_site import open_offline

WIDGET_VIEW = 'script[type="application/vnd.jupyter.widget-view+json"]'

# Code blocks (cell inputs, printed outputs, literal blocks) whose content is wider than the block:
# each reported with its longest line, so the line to shorten is easy to find.
WIDE_BLOCKS_JS = """() => {
    const blocks = [...document.querySelectorAll('.bd-article pre, .bd-article div.highlight')];
    return blocks.filter(b => b.getClientRects().length && b.scrollWidth > b.clientWidth + 1)
        .filter(b => b.tagName === 'PRE' || !b.querySelector('pre'))   // report the pre, not its box
        .map(b => {
            const lines = b.textContent.split('\\n');
            const longest = lines.reduce((a, c) => c.length > a.length ? c : a, '');
            const kind = b.closest('.cell_output') ? 'output' : b.closest('.cell_input') ? 'code' : 'block';
            return `${kind} block ${b.scrollWidth} px in a ${b.clientWidth} px column, longest line `
                 + `(${longest.length} characters): ${longest.trim().slice(0, 60)}`;
        });
}"""

IMAGES_JS = """() => [...document.images].filter(img => img.getClientRects().length || img.closest('figure'))
    .map(img => ({
        src: img.currentSrc.startsWith('blob:') ? 'a widget frame'
           : (img.getAttribute('src') || '').slice(0, 60),
        alt: (img.getAttribute('alt') || '').trim(),
        broken: img.complete && img.naturalWidth === 0,
    }))"""


def _image_problems(page):
    problems = []
    for img in page.evaluate(IMAGES_JS):
        if not img["alt"]:
            problems.append(f"image without alt text: {img['src']}")
        if img["broken"]:
            problems.append(f"image not drawn: {img['src']}")
    return problems


def _move(root, page):
    """Move the widget's control one step; return a word for what was moved, or None."""
    play = root.locator(".widget-play button")
    readout = root.locator(".widget-readout")
    if play.count():
        shown = readout.first.inner_text().strip() if readout.count() else ""
        play.first.click()
        page.wait_for_timeout(700)
        play.first.click()                                   # pause again
        return "play" if not readout.count() or readout.first.inner_text().strip() != shown else None
    handle = root.locator(".noUi-handle")
    if handle.count():
        shown = readout.first.inner_text().strip() if readout.count() else ""
        handle.first.focus()
        page.keyboard.press("ArrowRight")
        page.wait_for_timeout(100)
        if readout.count() and readout.first.inner_text().strip() == shown:   # it was at the end
            page.keyboard.press("ArrowLeft")
            page.keyboard.press("ArrowLeft")
        return "slider"
    select = root.locator("select")
    if select.count():
        options = select.first.locator("option").count()
        current = select.first.evaluate("s => s.selectedIndex")
        select.first.select_option(index=(current + 1) % options)
        return "menu"
    buttons = root.locator(".widget-toggle-button:not(.mod-active)")
    if buttons.count():
        buttons.first.click()
        return "buttons"
    return None


def _widget_problems(page, image_hash):
    """Each widget on the page that shows a picture must show another one once its control moves."""
    views = page.locator(WIDGET_VIEW).count()
    if not views:
        return []
    try:
        page.wait_for_function(f"n => document.querySelectorAll('.widget-subarea > *').length >= n",
                               arg=views, timeout=15_000)
    except Exception:
        return [f"{views} widgets stored, but only "
                f"{page.locator('.widget-subarea > *').count()} drawn"]
    problems = []
    roots = page.locator(".widget-subarea > *")
    for k in range(roots.count()):
        root = roots.nth(k)
        name = f"widget {k + 1} of {roots.count()}"
        images = root.locator("img")
        if not images.count():
            if root.locator("input, select, button, .noUi-handle").count():
                problems.append(f"{name}: a control with no picture behind it (does it need a kernel?)")
            continue
        root.scroll_into_view_if_needed()
        page.wait_for_function("img => img.complete && img.naturalWidth > 0",
                               arg=images.first.element_handle())
        before = image_hash(images.first)
        moved = _move(root, page)
        if moved is None:
            problems.append(f"{name}: nothing to move (or its animation did not advance)")
            continue
        deadline = time.monotonic() + 10                     # the Stack swaps its view asynchronously
        after = before
        while after == before and time.monotonic() < deadline:
            page.wait_for_timeout(100)
            if images.count():
                after = image_hash(images.first)
        if after == before:
            problems.append(f"{name}: its {moved} moved, but the picture stayed the same")
    return problems


@pytest.mark.browser
def test_every_page_reads_well_at_1280_px(site, browser, image_hash, artifacts):
    pages = sorted(p for p in site.rglob("*.html")
                   if p.parent == site or p.parent.name in {"book", "chapters", "exercises", "solutions"})
    assert len(pages) > 5, f"too few pages under {site}: {pages}"
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError   # skipped without playwright
    report = {}
    for path in pages:
        page, outside, errors = open_offline(browser, path.as_uri(), height=800)
        try:
            page.wait_for_load_state("networkidle")           # widgets and MathJax load after "load"
        except PlaywrightTimeoutError:
            report[str(path.relative_to(site))] = ["still loading files after 120 s"]
            page.close()
            continue
        page.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")
        problems = list(page.evaluate(WIDE_BLOCKS_JS))
        problems += _widget_problems(page, image_hash)
        problems += _image_problems(page)                    # also the frames the widgets now show
        page.wait_for_timeout(200)                           # late errors and fonts
        problems += errors + [f"request leaving the site: {url}" for url in outside]
        if problems:
            report[str(path.relative_to(site))] = problems
        page.close()
    (artifacts / "site_audit.json").write_text(json.dumps(report, indent=1) + "\n")
    lines = [f"{name}: {problem}" for name, problems in report.items() for problem in problems]
    assert not report, (f"{len(lines)} problems on {len(report)} of {len(pages)} pages "
                        "(also in tests/artifacts/site_audit.json):\n" + "\n".join(lines))
