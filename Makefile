# icl-lab: two commands do everything on a fresh clone.
#   make book   set up .venv and build the book at the papers' setting (paper scale), reading the shipped
#               stored results for what a laptop cannot compute in minutes -> _build/paper/_build/html/index.html
#   make test   set up .venv and run the unit tests + every notebook (nbval) at ci scale
# Python 3.11 (the pinned torch wheel is for 3.11); falls back to python3
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# tests and CI add their tools (requirements-test.txt) to the reader's environment
TEST_STAMP := $(VENV)/.installed-test
JB     := $(BIN)/jupyter-book
# folders of py:percent notebooks paired with .ipynb; synthesis/ sorts after chapters/, so a book build
# (Sphinx reads documents in name order) runs it after every chapter has exported its claims
NOTEBOOK_DIRS := chapters synthesis
# notebooks executed at once by make book / book-ci, and torch threads per kernel (2 x 1 on two cores)
JOBS ?= 2
# make test: one pytest worker more than JOBS, because about a tenth of the suite waits (kernel start-ups,
# timeouts, subprocesses) rather than computes
TEST_JOBS ?= $(shell echo $$(( $(JOBS) + 1 )))
# Python's byte-code caches (__pycache__, git-ignored) are written even where the environment turns them
# off: every pytest process and command-line subprocess would otherwise compile the tests and the library again
unexport PYTHONDONTWRITEBYTECODE
KERNEL_THREADS ?= 1
# seconds a cell may run in that pre-execution before it is abandoned (the build then executes that notebook
# itself): a kernel that stops answering (as can happen when two kernels start at the same moment) must not stall
# the build for an hour; paper-scale cells can take long, so only the ci build lowers it
EXEC_TIMEOUT ?= 3600
# the notebooks' execution cache is keyed on their code only: clear it when the library changes
LIBHASH = $(shell cat $(sort $(wildcard icl_lab/*.py icl_lab/*/*.py icl_lab/*/*/*.py)) requirements.txt | sha256sum | cut -c1-16)

.PHONY: book book-paper book-reduced test unit book-ci sync check-notebooks clean install install-test bench browser-check lab lint \
	references check-references

install: $(STAMP)
install-test: $(TEST_STAMP)

$(STAMP): requirements.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e . \
	  || $(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	@touch $(STAMP)

$(TEST_STAMP): $(STAMP) requirements-test.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-test.txt
	@touch $(TEST_STAMP)

# build the book at one scale into _build/<scale>; re-running with nothing changed re-executes nothing
define build_book
	@mkdir -p _build/$(1)
	@if [ "$$(cat _build/$(1)/.libhash 2>/dev/null)" != "$(LIBHASH)" ]; then rm -rf _build/$(1)/_build/.jupyter_cache _build/$(1)/_build/.doctrees; fi
	@touch synthesis/synthesis.ipynb  # the synthesis reads every chapter's exported claims: always re-read it
	@# execute the notebooks $(JOBS) at a time into the build's execution cache; a failed one runs once more, alone,
	@# with a warning, and a second failure stops the build naming the notebook
	ICL_LAB_SCALE=$(1) ICL_LAB_THREADS=$(KERNEL_THREADS) ICL_LAB_PROGRESS=0 $(BIN)/python tools/execute_parallel.py _build/$(1)/_build/.jupyter_cache --jobs $(JOBS) --timeout $(EXEC_TIMEOUT)
	ICL_LAB_SCALE=$(1) ICL_LAB_PROGRESS=0 $(JB) build . --path-output _build/$(1) $(2)
	@echo "$(LIBHASH)" > _build/$(1)/.libhash
	@echo "book: _build/$(1)/_build/html/index.html"
endef

book: $(STAMP)
	$(call build_book,paper,)

# the same, under the name that scripts written for earlier versions call
book-paper: book

# the reduced `book` scale, every experiment computed on a laptop (about 7 minutes on 2 cores) -> _build/book
book-reduced: $(STAMP)
	$(call build_book,book,)

# CI: ci scale, warnings are errors
book-ci: EXEC_TIMEOUT = 300
book-ci: $(TEST_STAMP)
	$(call build_book,ci,-W -n --keep-going)

# the built book browser-check opens (make browser-check BROWSER_HTML=_build/paper/_build/html: the published one)
BROWSER_HTML ?= _build/ci/_build/html
# open the built ci book in headless Chromium (Debian's, no download) at 1280 and 390 px: offline, math
# typeset, sliders move, figures captioned/legible/enlargeable, no leftover outputs or internal jargon,
# ledger statuses visible on a phone, navigation works (at 390 px the menu and the page contents open and close,
# at 1280 px the sidebar collapses and returns) with one search box; screenshots (desktop, phone, opened phone
# menu and contents, collapsed sidebar) under _build/ci/_build/screenshots
browser-check: $(TEST_STAMP)
	$(BIN)/python tools/browser_check.py $(BROWSER_HTML)

# the notebooks in JupyterLab (pick the scale in each notebook's first cell)
lab: $(TEST_STAMP)
	$(BIN)/jupyter lab

# the chapters' notebooks and the unit tests, longest file first (conftest.py orders them), on $(TEST_JOBS) pytest
# workers (one notebook stays on one worker, its cells in order: --dist loadscope), $(KERNEL_THREADS) torch
# thread(s) each; then the synthesis, which reads the ledgers the chapters exported
test: $(TEST_STAMP)
	ICL_LAB_SCALE=ci ICL_LAB_THREADS=$(KERNEL_THREADS) ICL_LAB_PROGRESS=0 $(BIN)/python -m pytest --nbval-lax -q -n $(TEST_JOBS) --dist loadscope --no-loadscope-reorder chapters tests </dev/null
	ICL_LAB_SCALE=ci ICL_LAB_PROGRESS=0 $(BIN)/python -m pytest --nbval-lax -q -p no:xdist -p no:xdist.looponfail -p no:hypothesispytest -p no:anyio synthesis </dev/null

unit: $(TEST_STAMP)
	ICL_LAB_SCALE=ci $(BIN)/python -m pytest tests -q

# update every .ipynb from its py:percent source (--update keeps the cell ids), without outputs
sync: $(TEST_STAMP)
	$(BIN)/jupytext --quiet --to ipynb --update $$(find $(NOTEBOOK_DIRS) -name '*.py' -not -path '*/.ipynb_checkpoints/*')
	$(BIN)/python tools/check_notebooks.py --strip

check-notebooks: $(TEST_STAMP)
	$(BIN)/python tools/check_notebooks.py

# ruff: the few rules chosen in pyproject.toml (pyflakes and pycodestyle's non-layout errors)
lint: $(TEST_STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf _build

# benchmarks: batched trainer vs the naive per-run loop (a small case and three papers' sweeps), every
# registered experiment and every notebook at both scales; they report (benchmarks/out/*), never fail
bench: $(TEST_STAMP)
	$(BIN)/python benchmarks/trainer.py
	$(BIN)/python benchmarks/workloads.py
	$(BIN)/python benchmarks/experiments.py
	$(BIN)/python benchmarks/book.py

# regenerate every shipped reference record at paper scale (resumable; about 40 min on 2 cores), and check
# that the current code reproduces them (what CI runs: one seed chunk of each, recomputed)
references: $(TEST_STAMP)
	tools/reference_runs.sh -- --executor dask --workers $(JOBS)

check-references: $(STAMP)
	$(BIN)/python tools/check_references.py --jobs $(JOBS)
