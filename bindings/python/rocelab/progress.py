"""A text progress bar for long calls (repeats, tuning trials, buffer sweeps).

It rewrites one line on stderr with a carriage return, which Jupyter renders in place,
so it needs no widget library. It draws only where someone watches: on a terminal or in
a notebook; in a pipe, a log file or a batch job it stays silent, so logs hold results,
not hundreds of carriage returns."""

import sys
import time

__all__ = ["ProgressBar", "interactive"]


def interactive(stream):
    """True for a terminal, or inside a Jupyter kernel (whose stderr renders ``\r``)."""
    if "ipykernel" in sys.modules:
        return True
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


class ProgressBar:
    """``total=None``: the number of steps is not known in advance (a comparison); the
    line then counts steps and shows the latest note, without a bar."""

    def __init__(self, total, label="", width=30, stream=None, enabled=True):
        self.total = None if total is None else max(int(total), 1)
        self.label = label
        self.width = width
        self.stream = stream or sys.stderr
        self.enabled = enabled and interactive(self.stream)
        self.done = 0
        self.started = time.monotonic()
        self.note = ""

    def update(self, done=None, note=None):
        self.done = self.done + 1 if done is None else int(done)
        if note is not None:
            self.note = note
        if not self.enabled:
            return
        elapsed = time.monotonic() - self.started
        if self.total is None:
            line = f"\r{self.label} step {self.done} {elapsed:.1f}s {self.note}\x1b[K"
        else:
            filled = int(self.width * min(self.done, self.total) / self.total)
            line = (f"\r{self.label} [{'#' * filled}{'.' * (self.width - filled)}] {self.done}/{self.total} "
                    f"{elapsed:.1f}s {self.note}")
        self.stream.write(line)
        self.stream.flush()

    def close(self):
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()

    def __enter__(self):
        self.update(0)
        return self

    def __exit__(self, *exc):
        self.close()
        return False
