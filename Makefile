# The two commands that do everything on a fresh machine: `make site` and `make test`.
# Each creates (or reuses) the virtual environment in .venv and installs what it needs.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check -q
STRICT ?=
ENGINE ?= mkdocs
PORT   ?= 8000
# Material prints an end-of-life banner (May 2027) when the `mkdocs` executable runs; the course's
# commands run MkDocs as a library and never print it; this keeps a direct `mkdocs` call quiet too.
# docs/hosting.md, "Zensical", says it once and how to build with the successor.
export NO_MKDOCS_2_WARNING := 1
# Dates in the built site (sitemap.xml) come from the last commit, so the same checkout always
# builds byte-identical pages.
export SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 315532800)

# Stamps record which dependency sets are installed, so reruns skip pip.
SITE_STAMP   := $(VENV)/.deps-site
MODELS_STAMP := $(VENV)/.deps-models
TEST_STAMP   := $(VENV)/.deps-test
ZENSICAL_STAMP := $(VENV)/.deps-zensical

.PHONY: site serve traces tiny-model tiny-rope-model evaluate-tiny test test-quick bench clean assets vendor reference check lesson

$(PY):
	$(PYTHON) -m venv $(VENV)

$(SITE_STAMP): pyproject.toml | $(PY)
	$(PIP) install -e .
	touch $@

$(MODELS_STAMP): pyproject.toml | $(PY)
	$(PIP) install -e '.[models]'
	touch $@

$(ZENSICAL_STAMP): pyproject.toml | $(PY)
	$(PIP) install -e '.[zensical]'
	touch $@

# the test extra holds the site's and the models' packages too: their stamps are set with it, so
# the suite's own `make site` runs (test_crash_safety) find this .venv set up, as after `make site`
$(TEST_STAMP): pyproject.toml | $(PY)
	$(PIP) install -e '.[models,test]'
	touch $(SITE_STAMP) $(MODELS_STAMP) $@

assets: $(SITE_STAMP)
	$(PY) -m generator assets

## Build the course into build/site from the committed traces (no torch needed). STRICT=1: nothing
## may be pending; STRICT=tiny: no tiny figure may be pending (GPT-2's stay warnings).
## ENGINE=zensical: build with Zensical into build/zensical-site (build/site is not touched).
site: $(SITE_STAMP) $(if $(filter zensical,$(ENGINE)),$(ZENSICAL_STAMP))
	$(PY) -m generator site $(if $(STRICT),--strict=$(STRICT)) $(if $(filter-out mkdocs,$(ENGINE)),--engine=$(ENGINE))

## Live preview on 127.0.0.1:$(PORT) for authors: a saved sentence is traced in the background
## (tiny here; GPT-2 where its weights are) and the page reloads with its figure. It installs the
## models extra (torch CPU, transformers) for that; TRACE=0 serves without it, and without tracing.
TRACE ?= 1
serve: $(SITE_STAMP) $(if $(filter 0,$(TRACE)),,$(MODELS_STAMP))
	$(PY) -m generator serve --port $(PORT) $(if $(filter 0,$(TRACE)),--no-trace)

## Trace every (model, sentence) the lessons use that is not in traces/ yet.
traces: $(MODELS_STAMP)
	$(PY) -m generator traces $(if $(PRUNE),--prune)

## Train the tiny model from ../shared/data/tinystories/ (both story files; about 50 minutes on 2 cores, resumable).
tiny-model: $(MODELS_STAMP)
	$(PY) -m generator train-tiny

## Train the tiny rotary model (Llama style: rotary positions, 4 query heads sharing 2 key/value heads)
## on the same tokenizer, stories and recipe (about 50 minutes on 2 cores, resumable; build/tiny-rope-run/).
tiny-rope-model: $(MODELS_STAMP)
	$(PY) -m generator train-tiny --model tiny-rope

## Measure the committed tiny model on the held-out stories that share no 8 words in a row with a
## training story, into generator/tiny_model/training_log.json (about a minute; training does it too).
evaluate-tiny: $(MODELS_STAMP)
	$(PY) -m generator evaluate-tiny
	$(PY) -m generator evaluate-tiny --model-dir generator/tiny_rope_model

# axe-core for the accessibility tests, from the npm registry into build/node (outside the
# package), at the version tests/browser/test_a11y.py pins (AXE_VERSION); a new pin reinstalls.
# Without npm it says so and the accessibility tests name the command.
AXE_VERSION := 4.14.1
AXE_STAMP   := build/node/.axe-core-$(AXE_VERSION)

$(AXE_STAMP):
	@if command -v npm >/dev/null; then \
	  mkdir -p build/node && \
	  npm install --prefix build/node --no-save --no-audit --no-fund axe-core@$(AXE_VERSION) >/dev/null && \
	  touch $@; \
	else echo "npm is not installed: the accessibility tests need axe-core@$(AXE_VERSION) (npm install --prefix build/node axe-core@$(AXE_VERSION))"; fi

# One worker per core (pytest-xdist), each taking whole test files, so a module's shared build and
# browser serve all its tests: 11 min 0 s from a fresh clone on a 2-core machine (1,243 tests), 28 min 31 s on one
# 2.5x slower (1,231 tests; its GPT-2-shaped end-to-end trace alone took 11.6 min, against 4.9). Both cores are
# busy throughout (about 1,290 CPU-seconds a run, the GPT-2-shaped trace 185 of them). The 25 slowest tests are
# listed at the end, for the suite's time.
# Since issue 50 the GPT-2-shaped course is traced once a run, for every test that needs the shape
# (tests/gpt2_store.py), on the small scoring set (traces --scoring-set small: 3 of its 12 texts, 6
# traces in all against 15), and test_models' and test_encoding's own GPT-2-shaped stand-in traces
# (107 s and 90 s) are gone: they read the shared course. Measured file by file on a 2-core machine
# shared with other engineers' suites (load average 8-10, so wall times ran 2-4x the CPU time):
# tracing the full set took 134 CPU-s (385 s wall) before circuits.json; the three GPT-2-shaped files
# now take 104 CPU-s in all, course included. COURSE_CPU_THROTTLE=4 runs every browser page 4 times
# slower (tests/browser/conftest.py); browser tests wait for conditions (course_builds.quiet), not for time.
# The tiny-traced course the browser, prose and determinism tests read is built once a run as well,
# not once per worker. From a fresh clone of this round's merge (.ci/run, CI=true, the machine otherwise
# idle): 1,511 passed, 15 skipped, pytest 12 min 54 s (.ci/run 13 min 48 s, installs included); the slowest
# setup is the shared GPT-2-shaped course (88 s), then the accessibility walks (24-39 s each).
# Later, with a third model and chapter 7 (fresh clone, idle): 1,791 passed, 8 skipped, pytest 14 min 50 s;
# with chapter 7's score split and the lighter her/his sweep: 1,793 passed, 8 skipped, pytest 14 min 53 s.
# With the hostile tester's and the ML reviewer's mends: 1,848 passed, 8 skipped, pytest 16 min 39 s.
# With a reader's and a second hostile tester's mends: 1,906 passed, 8 skipped, pytest 17 min 12 s.
# The run is CPU-bound: both cores about 99 % busy, and `-n 3` took 964 s against 942 s for `-n 2`.
# On a busy machine, measure CPU rather than wall time: COURSE_CPU_TIMES=FILE records each test phase's
# CPU-seconds, its subprocesses and Chromium included (tests/cpu_times.py; docs/testing.md).
# --no-loadscope-reorder: the files go out in tests/conftest.py's order (the slowest first, the
# GPT-2-shaped ones last); xdist's default reorders them by their number of tests, which had a
# GPT-2-shaped file's worker wait 94 s on the course's lock (tests/test_suite_order.py).
test: $(TEST_STAMP) $(AXE_STAMP)
	$(PY) -m pytest -n auto --dist loadfile --no-loadscope-reorder --durations=25

## The inner loop: every test but the browser ones and those of the GPT-2-shaped course (about a
## quarter of the suite's time). `make test` (and CI) runs them all.
test-quick: $(TEST_STAMP)
	$(PY) -m pytest -n auto --dist loadfile --no-loadscope-reorder --ignore=tests/browser -m "not browser and not gpt2_shaped" --durations=10

## Refresh generator/assets/vendor/ (Plotly's cartesian partial bundle) from the npm registry and
## check its integrity and sha256; the only target that needs npm.
vendor: $(SITE_STAMP)
	$(PY) tools/vendor_plotly.py

## docs/reference.md and docs/architecture.md's module table, generated from the code (the tests check them).
reference: $(SITE_STAMP)
	$(PY) -m generator reference

## Figures, not tests: tracer overhead, load times, bytes per trace, then script bytes per page,
## one-file chapter sizes and page timings in Chromium next to a blank page with the same Plotly,
## `make serve`'s time from saving a new sentence to its real heatmap, and each chapter's notebook's size.
## The pages are built into their own folder (build/bench-site), so build/site and its downloads
## stay as `make site` left them.
BENCH_SITE := build/bench-site
bench: $(TEST_STAMP)
	$(PY) -m generator bench
	$(PY) -m generator site --no-downloads -d $(BENCH_SITE)
	$(PY) -m generator.bench.browser --site $(BENCH_SITE) --page $(BENCH_SITE)/attention.html
	$(PY) -m generator.bench.play --page $(BENCH_SITE)/play.html
	$(PY) -m generator.bench.preview
	$(PY) -m generator.bench.notebook_sizes

## Check every lesson, fence, reference and glossary term against the tokenizers and traces without
## building the site: the one-line errors, exit status 1 on any (editors, .pre-commit-hooks.yaml).
## STRICT=tiny / STRICT=1: a pending figure counts too.
check: $(SITE_STAMP)
	$(PY) -m generator check $(if $(STRICT),--strict=$(STRICT))

## A new lesson: content/$(NAME).md from generator/assets/lesson-template.md (one figure of each
## common kind, each with a reference), added to mkdocs.yml's nav before the glossary, and traced
## when the models extra is installed (make serve and make traces install it).
lesson: $(SITE_STAMP)
	$(PY) -m generator lesson "$(NAME)"

clean:
	rm -rf build content/assets/generated
