"""The exit statuses of iobound, for scripts: one meaning each."""

EXIT_OK = 0  # all good
EXIT_FINDINGS = 1  # check raised a finding at or above --fail-on
EXIT_INPUT = 2  # bad input or usage; the message says what and where
EXIT_BUG = 3  # an internal error, a bug to report
EXIT_PROBE_FAILED = 4  # some probes failed; the others were measured and saved
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as shells report it); SIGTERM gives 143 and SIGHUP 129
