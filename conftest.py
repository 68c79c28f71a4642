"""Root test configuration, applied to tests/ and to the notebooks that nbval collects from
chapters/: use the small `ci` scale, two torch threads and a non-interactive matplotlib backend,
unless the caller set them (ICL_LAB_SCALE=paper make test runs the notebooks at paper scale)."""
import os

os.environ.setdefault("ICL_LAB_SCALE", "ci")
os.environ.setdefault("ICL_LAB_THREADS", "2")
os.environ.setdefault("MPLBACKEND", "Agg")
