"""Open the built book in a real (headless) Chromium and check what a reader sees.

    .venv/bin/python tools/browser_check.py [_build/ci/_build/html] [--screenshots DIR]

Needs Debian's chromium (`apt-get install chromium`) and the `playwright` Python package, which
drives that browser (no browser is downloaded).  Every page of the table of contents is served
from a local HTTP server with all other network access blocked, and the check fails if:

* a page requests anything outside the local server (the site must work offline);
* math is not typeset by the bundled MathJax (no rendered math containers where the source has $...$);
* a kernel-free slider does not change its figure when moved.

Exit status 1 on any failure.
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
    return sorted(p for p in (html / "chapters").glob("*.html"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("html", nargs="?", default=str(ROOT / "_build" / "ci" / "_build" / "html"))
    ap.add_argument("--screenshots", default=None)
    args = ap.parse_args()
    html = Path(args.html)
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
        for page_path in pages(html):
            rel = page_path.relative_to(html).as_posix()
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            external: list[str] = []
            page.on("request", lambda r, ext=external: None if r.url.startswith((base, "data:")) else ext.append(r.url))
            page.goto(f"{base}/{rel}", wait_until="load")
            page.wait_for_timeout(1500)  # let MathJax typeset
            if external:
                failures.append(f"{rel}: requested {len(external)} external resources, e.g. {external[0]}")
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
            print(f"browser check: {rel}: {n_math} math elements, {sliders.count()} sliders, "
                  f"{len(external)} external requests")
            if args.screenshots:
                Path(args.screenshots).mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(Path(args.screenshots) / (page_path.stem + ".png")), full_page=True)
            page.close()
        browser.close()
    httpd.shutdown()
    for f in failures:
        print("browser check FAILED:", f)
    print(f"browser check: {len(pages(html))} pages, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
