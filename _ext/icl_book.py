"""Small Sphinx fixes for the icl-lab book (loaded through _config.yml's ``local_extensions``).

* Some extension pairs (sphinx-thebe and sphinx-togglebutton under jupyter-book 1.x) register the
  same inline script twice; the second ``const THEBE_JS_URL = ...`` then throws "Identifier has
  already been declared" in every page. Each page's script list is de-duplicated here, keeping the
  first occurrence (the browser check fails on any JavaScript error).
* The kernel client's missed replies are prevented at their cause (``_ext/kernel_wake.py``).
"""
from __future__ import annotations


def _dedupe_scripts(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, kept = set(), []
    for s in scripts:
        # the duplicates differ only in filename None vs '' (inline scripts): treat both as inline
        key = (str(getattr(s, "filename", s) or ""), tuple(sorted((getattr(s, "attributes", {}) or {}).items())))
        if key in seen:
            continue
        seen.add(key)
        kept.append(s)
    scripts[:] = kept


def setup(app):
    from kernel_wake import wake_after_session_sends  # the book build executes some notebooks itself

    wake_after_session_sends()
    # first: html-page-context is emitted with emit_firstresult, so a later handler may never run
    app.connect("html-page-context", _dedupe_scripts, priority=1)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
