"""The store reader over hostile files: each is refused (StoreError) quickly, never hangs or loads."""
import os
import time

import pytest

from icl_lab.store import ResultsStore, StoreError


def _make(kind, path, tmp_path):
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev_zero":
        os.symlink("/dev/zero", path)
    elif kind == "link_out":
        outside = tmp_path / "outside.json"
        outside.write_text("{}")
        os.symlink(outside, path)
    elif kind == "deep":
        path.write_text("[" * 100_000)
    elif kind == "huge_int":
        path.write_text("1" * 5000)
    elif kind == "directory":
        path.mkdir()
    elif kind == "loop":
        os.symlink(path, path)
    elif kind == "not_json":
        path.write_bytes(b"\xff\xfe{")


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "link_out", "deep", "huge_int", "directory", "loop", "not_json"])
def test_reader_refuses_hostile_files_quickly(tmp_path, kind):
    root = tmp_path / "results"
    (root / "exp").mkdir(parents=True)
    path = root / "exp" / "k.json"
    _make(kind, path, tmp_path)
    t = time.perf_counter()
    with pytest.raises(StoreError):
        ResultsStore(root).read(path)
    assert time.perf_counter() - t < 2.0
