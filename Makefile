# Spravka: `make run` serves the demo, `make test` runs every check. Both set themselves up.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)

.PHONY: install messages run test lint typecheck pytest bench stop clean-data

install: $(STAMP) messages

# Every catalog (locale/ and each app's <app>/locale/) compiled next to its source: the .mo files
# are built, not committed (.gitignore), and rebuilt whenever their .po changes.
PO := $(shell find . -path ./.venv -prune -o -path ./.data -prune -o -path '*/locale/*/LC_MESSAGES/*.po' -print)
MO := $(PO:.po=.mo)

messages: $(MO)

%.mo: %.po
	@command -v msgfmt >/dev/null 2>&1 || { echo "msgfmt is required to compile $< (Debian: apt-get install gettext)"; exit 1; }
	msgfmt --check --output-file=$@ $<

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "Python 3.11 is required ($(PYTHON) not found)"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip setuptools wheel
	$(BIN)/pip install --quiet -e '.[dev]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

run: install
	$(BIN)/python manage.py rundemo

lint: install
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache

typecheck: install
	SPRAVKA_EMBEDDED=0 $(BIN)/mypy .

# pytest-xdist: TEST_WORKERS processes (each with its own test database, queue, channel and cache
# names: assistant/testing.py); a file's tests stay on one worker, so module fixtures are built once.
# The 20 slowest tests are printed at the end. TEST_WORKERS=0 runs everything in one process.
TEST_WORKERS ?= 2
pytest: install
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadfile --durations=20

test: lint typecheck pytest

bench: install
	$(BIN)/python bench/run_all.py

stop:
	$(BIN)/python -c "from assistant import embedded; embedded.stop_services()" || true

# Every folder the project made for its data: `.data/` and the short /tmp twin of a long checkout path.
clean-data:
	@if [ -x $(BIN)/python ]; then \
		$(BIN)/python -c "from assistant import embedded; [print('removed', f) for f in embedded.clean_data()]"; \
	else rm -rf "$${SPRAVKA_DATA_DIR:-.data}"; fi
