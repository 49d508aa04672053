# `make test`: the whole test suite, as the README gives it. tools/test sets up what the tests
# check our files with (playwright-core, a Python environment in target/), runs `cargo test`
# (ARGS are passed on: make test ARGS='web'), then lists whatever check could not run.
.PHONY: test

test:
	tools/test $(ARGS)
