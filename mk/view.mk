# The pictures, the live view and the page of a run (docs/view.md).  Their
# unit tests (tests/unit/test_draw.c, test_report.c, test_watch.c) run in
# `make test-unit` and need lstopo-no-graphics (the build set); the JVM
# tests (tests/jvm ViewTest) run in `make test-java` and need a real
# browser and terminal: Debian's chromium and tmux, installed here first.

.PHONY: view-deps
view-deps:
	@bash scripts/install-deps.sh view

test-java: view-deps
