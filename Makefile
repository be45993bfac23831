# drivebench: `make demo` and `make test` do all set-up on a fresh machine. `make` alone installs.
SHELL  := /bin/bash
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
CORE_STAMP := $(VENV)/.installed-core
# The cache is .cache/ in this checkout for make, the CLI and the tests alike (drivebench/paths.py);
# DRIVEBENCH_CACHE overrides it everywhere. The Dockerfile sets the same variables as these exports
# (tests/cli/test_container_files.py compares them).
export HF_HUB_OFFLINE := 1
export HF_HUB_DISABLE_PROGRESS_BARS := 1
export TOKENIZERS_PARALLELISM := false
PIP_TICK ?= 10  # seconds between the "still installing" lines
PIP_INSTALL := $(BIN)/python -m pip install --disable-pip-version-check --progress-bar on
CHROMIUM ?= chromium
CHROMEDRIVER ?= chromedriver
BROWSER_PACKAGES := chromium chromium-driver

.DEFAULT_GOAL := install
.PHONY: demo test test-fast bench lint docs install clean path-hint vector-packs
.PHONY: browser report-screenshot  # the eval, probe and audit HTML reports in headless Chromium, 1280 and 390 px
.PHONY: ui-screenshots  # the web console's pages in headless Chromium
.PHONY: cjk-font  # screenshots of Chinese pages need a CJK font, or every character is an empty box
CJK_FONT_PACKAGE := fonts-wqy-microhei

$(BIN)/python:
	@echo "creating $(VENV) with $(PYTHON)"
	$(PYTHON) -m venv $(VENV)

# Re-install only when the project's own dependency list changes. pip prints what it collects as it goes; while it
# unpacks (silent for up to a minute) a line every $(PIP_TICK) s (10) says it works. A failed pip leaves no stamp.
# The ticker kills its own sleep when stopped: an orphaned sleep holds make's output open, and make in a pipe
# (a CI log) would end up to $(PIP_TICK) s after pip.
# $(call pip_install,SPEC,WHAT,HOW LONG[,SHELL GUARD THAT MAY exit 0 FIRST])
define pip_install
	@set -o pipefail; $(4) echo "installing $(2) into $(VENV) (pip, $(3))"; start=$$SECONDS; \
	( trap 'kill $$nap 2>/dev/null; exit 0' TERM; \
	  while :; do sleep $(PIP_TICK) & nap=$$!; wait $$nap; echo "  ... pip is still installing ($$((SECONDS - start)) s)"; done ) & ticker=$$!; \
	$(PIP_INSTALL) -e '$(1)' 2>&1 | { grep -v "^WARNING: Location .* is ignored" || true; }; status=$$?; \
	kill $$ticker; exit $$status
endef

# Everything: the runtime, the sentence-transformers embedders (torch), the test tools, Milvus.
$(STAMP): pyproject.toml | $(BIN)/python
	$(call pip_install,.[all],drivebench and all its dependencies,one to two minutes on a fresh machine)
	@touch $(STAMP) $(CORE_STAMP)

# make demo needs only the runtime; the default embedder (e5) comes with it and torch does not. A fresh machine
# is at the demo after about a minute of pip; make test adds the rest. A current full install serves as well.
$(CORE_STAMP): pyproject.toml | $(BIN)/python
	$(call pip_install,.,drivebench's runtime,about a minute on a fresh machine; make test adds the rest,if [ -f $(STAMP) ] && [ $(STAMP) -nt pyproject.toml ]; then exit 0; fi;)
	@touch $(CORE_STAMP)

install: $(STAMP)
	@$(MAKE) --no-print-directory path-hint

# How to run `drivebench` without the .venv/bin/ prefix (printed at the end of `make` and `make demo`).
path-hint:
	@echo ""
	@echo "drivebench is installed in $(CURDIR)/$(BIN). To run it by name in this shell:"
	@echo "    export PATH=\"$(CURDIR)/$(BIN):\$$PATH\"      # or: source $(BIN)/activate"
	@echo "then try: drivebench --help · drivebench info · drivebench demo"

demo: $(CORE_STAMP)
	$(BIN)/drivebench demo
	@$(MAKE) --no-print-directory path-hint

# Chromium first: without it (and without root to install it) make test stops before installing anything.
# Three pytest workers (pytest-xdist) on two cores: about a quarter of the suite waits on servers, processes and
# sync intervals, and a third worker fills those waits (measured on 2 cores: 380 s against 440-460 s with two).
# Each test file runs on one worker so its module fixtures are built once; the 25 slowest tests are listed at the
# end. The files go out in the suite's own order, the files with slow tests first (tests/conftest.py), not in
# xdist's (most tests first), which started the few-test files that start servers last: a minute's tail.
# DRIVEBENCH_SOAK=1 runs the long crash and concurrency soaks.
PYTEST_WORKERS ?= 3
test: browser $(STAMP)
	$(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=25

# Without the tests marked slow (tests/conftest.py marks what starts a process or a server, builds a corpus or
# loads a model).
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist loadfile -m "not slow"

# Rebuild the packaged e5 vectors of the built-in corpora (corpora/vectors/*.npz, see corpora/vectors/__init__.py);
# tests/corpora/test_vector_packs_current.py says when they are stale.
vector-packs: $(CORE_STAMP)
	$(BIN)/python scripts/build_vector_packs.py

bench: $(STAMP)
	$(BIN)/python -m benchmarks

# ruff, the import contracts of pyproject.toml ([tool.importlinter]: one direction of dependency), mypy on src/
# ([tool.mypy]; tests/test_type_ignores.py keeps the count of `type: ignore` from growing), then the manual
lint: $(STAMP)
	$(BIN)/ruff check . && $(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache
	$(BIN)/mypy
	$(MAKE) --no-print-directory docs

# The manual (docs/, mkdocs.yml) as a site in site/; --strict: a broken link, anchor or nav entry is an error.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

# Headless Chromium for the browser tests and the screenshot (Debian packages), only when missing.
# As root it is installed; as another user make stops at once and says what to install.
browser:
	@{ command -v $(CHROMIUM) && command -v $(CHROMEDRIVER); } >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" -eq 0 ]; then \
	    echo "installing headless Chromium for the browser tests: $(BROWSER_PACKAGES) (apt-get)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(BROWSER_PACKAGES); \
	  else \
	    echo "make test needs headless Chromium ($(CHROMIUM)) and its driver ($(CHROMEDRIVER)) for its browser tests; not installed:$$(for c in $(CHROMIUM) $(CHROMEDRIVER); do command -v $$c >/dev/null || printf ' %s' $$c; done)" >&2; \
	    echo "Install the Debian packages $(BROWSER_PACKAGES) as root, then run make test again:" >&2; \
	    echo "    sudo apt-get install -y $(BROWSER_PACKAGES)" >&2; \
	    exit 1; \
	  fi; }

# A CJK font for the screenshots (only when fontconfig knows none); as root installed, otherwise make says what to install.
cjk-font:
	@[ -n "$$(fc-list :lang=zh 2>/dev/null)" ] || { \
	  if [ "$$(id -u)" -eq 0 ]; then \
	    echo "installing a CJK font for the screenshots: $(CJK_FONT_PACKAGE) (apt-get)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(CJK_FONT_PACKAGE); \
	  else \
	    echo "the screenshots show Chinese text and no CJK font is installed; as root: sudo apt-get install -y $(CJK_FONT_PACKAGE)" >&2; \
	    exit 1; \
	  fi; }

# PNG of the demo's HTML report (runs the demo into reports/screenshot-demo first). The runtime install is enough
# (the script drives chromedriver with httpx; tests/cli/test_runtime_without_torch.py checks its imports).
report-screenshot: $(CORE_STAMP) browser cjk-font
	$(BIN)/python scripts/report_screenshot.py --out-dir reports/screenshots

# PNG of every console page at 1280x800 and at phone width (seed corpus, chromedriver); the runtime install is enough.
ui-screenshots: $(CORE_STAMP) browser cjk-font
	$(BIN)/python scripts/ui_screenshots.py --out reports/ui-screenshots

clean:
	rm -rf $(VENV) .cache reports .pytest_cache .mypy_cache site
