# drivebench: `make demo` and `make test` do all set-up on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
export DRIVEBENCH_CACHE ?= $(CURDIR)/.cache
export HF_HUB_OFFLINE := 1
export HF_HUB_DISABLE_PROGRESS_BARS := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: demo test test-fast bench lint install clean
.PHONY: browser report-screenshot  # issue #6: HTML report in headless Chromium

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Re-install only when the project's own dependency list changes.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[all]'
	@touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/drivebench demo

test: $(STAMP) browser
	$(BIN)/python -m pytest -q

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow"

bench: $(STAMP)
	$(BIN)/python -m benchmarks

lint: $(STAMP)
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

# issue #6: headless Chromium for the HTML report test and screenshot (Debian packages), only when missing.
browser:
	@test -x /usr/bin/chromium || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver; }

# issue #6: PNG of the demo's HTML report (runs the demo into reports/screenshot-demo first).
report-screenshot: $(STAMP) browser
	$(BIN)/python scripts/report_screenshot.py --out reports/report-screenshot.png

clean:
	rm -rf $(VENV) .cache reports .pytest_cache
