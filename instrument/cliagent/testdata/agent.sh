#!/bin/sh
# A fake agent: replays the transcript $FAKE_TRANSCRIPT on stdout, writes
# $FAKE_STDERR to stderr, sleeps $FAKE_SLEEP seconds and exits $FAKE_EXIT.
if [ -n "$FAKE_TRANSCRIPT" ]; then cat "$FAKE_TRANSCRIPT"; fi
if [ -n "$FAKE_STDERR" ]; then printf '%s\n' "$FAKE_STDERR" >&2; fi
if [ -n "$FAKE_SLEEP" ]; then exec sleep "$FAKE_SLEEP"; fi
exit "${FAKE_EXIT:-0}"
