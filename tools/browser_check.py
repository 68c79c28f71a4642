"""Open the built book in a real (headless) Chromium and check what a reader sees.

    .venv/bin/python tools/browser_check.py [_build/ci/_build/html] [--screenshots DIR]

Needs Debian's chromium (`apt-get install chromium`) and the `playwright` Python package, which
drives that browser (no browser is downloaded).  Every page of the table of contents is served
from a local HTTP server with all other network access blocked, and the check fails if:

* a page requests anything outside the local server (the site must work offline);
* a page raises a JavaScript error or logs one to the console;
* math is not typeset by the bundled MathJax (no rendered math containers where the source has $...$);
* a figure is missing: an image that does not load, or a notebook page with no figure at all;
* a link inside the book (cross-reference, citation, table of contents) points at a page or an
  anchor that does not exist;
* a kernel-free slider does not change its figure when moved.

It saves a full-page screenshot of every page (default: ``<html>/../screenshots``, i.e. under the
build directory).  Exit status 1 on any failure.
"""
from __future__ import annotations

import argparse
import functools
import http.server
import shutil
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def serve(directory: Path):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(directory))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def pages(html: Path) -> list[Path]:
    """Every page of the book: the chapters, in sub-folders too (index.html only redirects to the intro)."""
    return sorted(p for d in ("chapters", "synthesis") for p in (html / d).rglob("*.html"))


# collects, in the page, every internal link target and the ids present, so links can be checked
_LINKS_JS = """() => {
  const out = [];
  for (const a of document.querySelectorAll('a[href]')) {
    const h = a.getAttribute('href');
    if (!h || h.startsWith('http') || h.startsWith('mailto:') || h.startsWith('javascript:') || h.startsWith('data:')) continue;
    out.push(a.href);
  }
  return out;
}"""

_BROKEN_IMAGES_JS = """() => Array.from(document.images)
  .filter(im => im.complete && im.naturalWidth === 0 && im.getAttribute('src'))
  .map(im => (im.getAttribute('src') || '').slice(0, 80))"""


def check_links(page, base: str, html: Path, rel: str, ids_cache: dict) -> list[str]:
    """Internal links must point at an existing file, and an anchor at an existing id there."""
    from urllib.parse import unquote, urlparse

    bad = []
    for url in sorted(set(page.evaluate(_LINKS_JS))):
        if not url.startswith(base):
            continue
        u = urlparse(url)
        target = html / unquote(u.path.lstrip("/"))
        if target.is_dir():
            target = target / "index.html"
        if not target.exists():
            bad.append(f"{rel}: link to a missing page {u.path}")
            continue
        if u.fragment and target.suffix == ".html":
            if target not in ids_cache:
                import re

                text = target.read_text(errors="replace")
                ids_cache[target] = set(re.findall(r'\bid="([^"]+)"', text)) | set(re.findall(r'\bname="([^"]+)"', text))
            if unquote(u.fragment) not in ids_cache[target]:
                bad.append(f"{rel}: link to a missing anchor {u.path}#{u.fragment}")
    return bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("html", nargs="?", default=str(ROOT / "_build" / "ci" / "_build" / "html"))
    ap.add_argument("--screenshots", default=None)
    args = ap.parse_args()
    html = Path(args.html)
    shots = Path(args.screenshots) if args.screenshots else html.parent / "screenshots"
    if not (html / "index.html").exists():
        print(f"browser check: no built book at {html} (run make book-ci first)")
        return 1
    exe = find_chromium()
    if exe is None:
        print("browser check: chromium not found (apt-get install chromium)")
        return 1
    from playwright.sync_api import sync_playwright

    httpd = serve(html)
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    failures: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync",
            # offline: every host name but the local server fails to resolve
            "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"])
        ids_cache: dict = {}
        for page_path in pages(html):
            rel = page_path.relative_to(html).as_posix()
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            external: list[str] = []
            js_errors: list[str] = []
            page.on("request", lambda r, ext=external: None if r.url.startswith((base, "data:")) else ext.append(r.url))
            page.on("pageerror", lambda e, errs=js_errors: errs.append(str(e)))
            page.on("console", lambda m, errs=js_errors: errs.append(m.text) if m.type == "error" else None)
            page.goto(f"{base}/{rel}", wait_until="load")
            page.wait_for_timeout(1500)  # let MathJax typeset
            if external:
                failures.append(f"{rel}: requested {len(external)} external resources, e.g. {external[0]}")
            # a blocked external request logs a console error of its own: that is reported above
            js_errors = [e for e in js_errors if "ERR_NAME_NOT_RESOLVED" not in e]
            if js_errors:
                failures.append(f"{rel}: {len(js_errors)} JavaScript error(s), e.g. {js_errors[0][:200]}")
            broken = page.evaluate(_BROKEN_IMAGES_JS)
            if broken:
                failures.append(f"{rel}: {len(broken)} image(s) failed to load, e.g. {broken[0]}")
            is_notebook = page_path.with_suffix(".ipynb").exists() or (html / "_sources" / rel).with_suffix(".ipynb").exists()
            n_img = page.locator("main img, article img").count()
            if is_notebook and n_img == 0:
                failures.append(f"{rel}: a notebook page with no figure")
            failures.extend(check_links(page, base, html, rel, ids_cache))
            source = page_path.read_text()
            n_math = page.locator("mjx-container").count()
            if ("\\(" in source or "\\[" in source or 'class="math' in source) and n_math == 0:
                failures.append(f"{rel}: math present in the page but none typeset (MathJax did not run)")
            sliders = page.locator(".icl-static-slider")
            for i in range(sliders.count()):
                s = sliders.nth(i)
                img, rng = s.locator("img"), s.locator("input[type=range]")
                before = img.get_attribute("src")
                top = int(rng.get_attribute("max"))
                current = int(rng.input_value())
                target = 0 if current != 0 else top
                rng.fill(str(target))  # sets the value and fires the input event
                after = img.get_attribute("src")
                if before == after:
                    failures.append(f"{rel}: slider {i} did not change its figure when moved to {target}")
            print(f"browser check: {rel}: {n_math} math elements, {n_img} images, {sliders.count()} sliders, "
                  f"{len(external)} external requests, {len(js_errors)} JS errors")
            shots.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(shots / (rel.replace("/", "__").removesuffix(".html") + ".png")), full_page=True)
            page.close()
        browser.close()
    httpd.shutdown()
    for f in failures:
        print("browser check FAILED:", f)
    print(f"browser check: {len(pages(html))} pages, {len(failures)} failures; screenshots in {shots}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
