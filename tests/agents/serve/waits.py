"""How long the browser app's tests wait for something: HANG seconds, a guard against a test
that hangs, never a pace a step must keep. A first run after a rebase (numba kernels and bytecode
compiled again, in the server's threads, on a machine shared with other work) makes a first
frame or an oracle take tens of seconds; the tests wait on the condition itself (the page ready,
the frame shown, the session's update) and only give up on a real hang (issue 40's flaky runs:
Playwright's 30 s default and 20 s polls gave up on a slow but correct app)."""

HANG = 600.0                 # seconds
HANG_MS = HANG * 1000        # Playwright's unit


def guarded(page):
    """``page`` with HANG as the default of all its waits (Playwright's default is 30 s)."""
    page.set_default_timeout(HANG_MS)
    page.set_default_navigation_timeout(HANG_MS)
    return page
