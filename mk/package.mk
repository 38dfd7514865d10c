# The Debian package: `make deb` builds $(B)/deb/numapin_VERSION_ARCH.deb
# (packaging/make-deb.sh); `make test-package`, part of `make test`, builds
# and checks it without installing it (packaging/test-deb.sh).

DEB_ARCH := $(shell dpkg --print-architecture 2>/dev/null)
DEB := $(B)/deb/numapin_$(VERSION)_$(DEB_ARCH).deb
MAN_PAGES := man/numapin.1 man/numapin-agent.7

.PHONY: deb test-package
deb: $(DEB)

$(DEB): $(B)/libnumapin.so $(B)/numapin $(MAN_PAGES) packaging/make-deb.sh packaging/copyright \
        VERSION README.md $(wildcard docs/*.md) $(wildcard docs/pictures/*.svg)
	bash packaging/make-deb.sh --build $(B) --version $(VERSION) --out $@

test-package: $(DEB)
	JAVA=$(JDK17)/bin/java bash packaging/test-deb.sh $(DEB)

TEST_TARGETS += test-package
