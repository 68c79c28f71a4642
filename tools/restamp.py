"""Re-stamp the shipped results after a change of the code that does not change what it computes.

Every shipped reference record and stored full result names the fingerprint of the code that computed it
(:func:`icl_lab.records.fingerprint`); a result whose fingerprint is not the current code's is stale, and the
book would compute it again (hours). A refactor that moves or renames code without changing a number — a helper
given one home, a declaration added to a registration — changes the fingerprints all the same. This tool
replaces, in every shipped result whose stored fingerprint is exactly the fingerprint the code at ``--base``
gives its module, that fingerprint by the current one, and nothing else (the record's checksum is recomputed;
each file keeps its formatting byte for byte). A result computed by any other code is left stale.

It is for behaviour-preserving changes only, and says nothing about whether a change is one. Show that first:
the ci ledger of the base and of the change, computed on one machine, agree value for value
(``icl-lab report --compare`` and a diff of the exported measurements), and
``tools/check_references.py`` recomputes every reference's cheapest chunk bit for bit after the re-stamp (on the
kind of CPU the records were computed on). Usage::

    python tools/restamp.py --base 12aa62a            # lists what it would change
    python tools/restamp.py --base 12aa62a --apply    # changes it
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from icl_lab import paths, records, registry  # noqa: E402
from icl_lab.memo import stored  # noqa: E402


def _module_of(function: str) -> str:
    """The importable module of a stored call's ``module.qualname``."""
    import importlib.util

    mod = function.rsplit(".", 1)[0]
    while mod and importlib.util.find_spec(mod) is None:
        mod = mod.rsplit(".", 1)[0]
    return mod


def base_fingerprints(base: str, modules: list[str]) -> dict[str, str | None]:
    """``{module: fingerprint}`` computed by the code of commit ``base`` (None: no such module there)."""
    with tempfile.TemporaryDirectory(prefix="restamp-") as tmp:
        tree = Path(tmp) / "base"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--quiet", "--detach", str(tree), base], check=True)
        try:
            code = ("import json, sys, importlib.util\nfrom icl_lab.records import fingerprint\nout = {}\n"
                    "for m in json.loads(sys.argv[1]):\n"
                    "    out[m] = fingerprint(m) if importlib.util.find_spec(m) is not None else None\n"
                    "print(json.dumps(out))")
            done = subprocess.run([sys.executable, "-c", code, json.dumps(modules)], cwd=tree, capture_output=True,
                                  text=True, check=True, env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"})
            return json.loads(done.stdout)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=True)


def _replace_once(text: str, old: str, new: str, path: Path) -> str:
    if text.count(old) != 1:
        raise SystemExit(f"restamp: {path}: expected {old!r} once, found it {text.count(old)} times")
    return text.replace(old, new)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="the commit whose code computed the shipped results")
    ap.add_argument("--apply", action="store_true", help="rewrite the files (default: only list them)")
    args = ap.parse_args(argv)
    exps = registry.all_experiments()
    recs = [(p, r) for p, r, err in records_of(exps) if r is not None]
    fulls = stored(paths.REFERENCE / "full")
    modules = sorted({exps[r["experiment"]].run.__module__ for _, r in recs}
                     | {_module_of(m["call"]["function"]) for m in fulls})
    old = base_fingerprints(args.base, modules)
    new = {m: records.fingerprint(m) for m in modules}
    def record_text(path, rec, fp, module):  # the fingerprint, and the checksum that covers it
        rec["meta"]["code"]["fingerprint"] = new[module]
        text = _replace_once(path.read_text(), f'"fingerprint": "{fp}"', f'"fingerprint": "{new[module]}"', path)
        return _replace_once(text, f'"checksum": "{rec["checksum"]}"', f'"checksum": "{records.checksum(rec)}"', path)

    def full_text(path, meta, fp, module):
        return _replace_once(path.read_text(), f'"fingerprint": "{fp}"', f'"fingerprint": "{new[module]}"', path)

    todo = ([(path, rec, rec["meta"]["code"].get("fingerprint"), exps[rec["experiment"]].run.__module__, record_text)
             for path, rec in recs]
            + [(Path(m["path"]), m, m.get("fingerprint"), _module_of(m["call"]["function"]), full_text) for m in fulls])
    changed = kept = stale = 0
    for path, item, fp, module, rewrite in todo:
        if fp == new[module]:
            kept += 1
        elif fp != old[module]:
            stale += 1
            print(f"left stale (computed by other code than {args.base}): {path.relative_to(ROOT)}")
        else:
            changed += 1
            if args.apply:
                path.write_text(rewrite(path, item, fp, module))
    verb = "re-stamped" if args.apply else "would re-stamp"
    print(f"{verb} {changed} result(s); {kept} already current; {stale} left stale")
    return 0


def records_of(exps):
    from icl_lab.store import ResultsStore

    return ResultsStore(paths.REFERENCE, reference=False).records(experiments=exps)


if __name__ == "__main__":
    raise SystemExit(main())
