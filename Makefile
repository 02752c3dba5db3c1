# Two entry points (see README.md): `make book` builds the site into _build/html,
# `make test` runs every test. Each creates .venv and installs what it needs first.
# `make book SOLUTIONS=0` builds the site for a course: the same pages without the worked solutions.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PYTEST_WORKERS ?= 2
SOLUTIONS ?= 1

.PHONY: book pdf test test-fast notebooks exercises venv clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# labkit with its grading extra, and the instructor material (solutions, hidden checks) beside it
# then the numba kernels are compiled once for this installation (python -m labkit compile), so no
# notebook or test waits for them, and so is the bytecode of both packages (an editable install
# writes none, nor does any process where PYTHONDONTWRITEBYTECODE is set: each kernel and grading
# sandbox would compile labkit's sources again, about 0.25 CPU-s per process)
$(VENV)/.book-installed: $(BIN)/python requirements.txt pyproject.toml instructor/pyproject.toml
	$(BIN)/pip install --quiet -r requirements.txt -e ".[grading]" -e instructor/
	$(BIN)/python -m labkit compile
	$(BIN)/python -m compileall -q labkit instructor/labkit_instructor
	touch $@

$(VENV)/.test-installed: $(VENV)/.book-installed requirements-test.txt
	$(BIN)/pip install --quiet -r requirements-test.txt
	touch $@

venv: $(VENV)/.test-installed

# make book REPOSITORY=https://github.com/ORG/REPO  turns on the launch buttons for one build (the
# lasting setting is repository.url in _config.yml); make book SOLUTIONS=0  leaves the solutions out.
# After Jupyter Book: the downloadable notebooks get the build's install cell (scripts/install_cell.py)
# and plain Jupyter Markdown instead of MyST (scripts/plain_markdown.py),
# and the JupyterLite site of the chapters and exercises is built into _build/html/lite (offline).
REPOSITORY ?=
book: $(VENV)/.book-installed
	$(if $(filter 0,$(SOLUTIONS)),rm -rf _build/html _build/.doctrees)
	$(BIN)/jupyter-book build -W --path-output . $$($(BIN)/python scripts/book_config.py --out _build/config \
	  $(if $(REPOSITORY),--repository $(REPOSITORY)) $(if $(filter 0,$(SOLUTIONS)),--no-solutions)) .
	$(BIN)/python scripts/install_cell.py --site _build/html --config _build/config/_config.yml
	$(BIN)/python scripts/plain_markdown.py --site _build/html --config _build/config/_config.yml
	$(BIN)/python scripts/build_lite.py --site _build/html --config _build/config/_config.yml
	$(BIN)/python scripts/link_pdf.py --site _build/html --pdf _build/pdf/book.pdf

# the whole book as a PDF, _build/pdf/book.pdf (Jupyter Book's LaTeX builder with xelatex; needs Debian's
# TeX packages, which .ci/run installs), offered on the site when one is built (scripts/link_pdf.py;
# make book offers it too). make pdf SOLUTIONS=0 leaves the solutions out, as for the site.
pdf: $(VENV)/.book-installed
	$(BIN)/python scripts/build_pdf.py --out _build/pdf $(if $(filter 0,$(SOLUTIONS)),--no-solutions)
	if [ -f _build/html/index.html ]; then \
	  $(BIN)/python scripts/link_pdf.py --site _build/html --pdf _build/pdf/book.pdf; fi

# whole files to each worker (nbval's cells share a kernel), in the order tests/conftest.py gives them
# (the long files first); pytest-xdist would otherwise start the files with the most tests first,
# and its two longest files, one test each, last
test: $(VENV)/.test-installed
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder

# fast feedback while developing: the library tests only (no notebooks, no browser)
test-fast: $(VENV)/.test-installed
	$(BIN)/python -m pytest tests -x -q -o addopts="" -p no:nbval -p no:cacheprovider --ignore=tests/browser -m "not browser"

# re-execute every notebook in place (the only way stored outputs are made)
notebooks: $(VENV)/.book-installed
	$(BIN)/python scripts/execute_notebooks.py --jobs 2

# rebuild exercises/ and solutions/ from instructor/labkit_instructor/exercises/ (solutions are executed)
exercises: $(VENV)/.book-installed
	$(BIN)/python scripts/build_exercises.py

clean:
	rm -rf _build .pytest_cache
