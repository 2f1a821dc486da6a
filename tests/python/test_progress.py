"""The progress bar draws on a terminal or in a notebook, and stays silent in a pipe."""

import io

from rocelab.progress import ProgressBar


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def test_on_a_terminal_the_bar_is_redrawn_in_place():
    out = FakeTerminal()
    with ProgressBar(4, label="tune", stream=out) as bar:
        bar.update(note="best 1.5")
        bar.update(2)
    text = out.getvalue()
    assert "\rtune [" in text and "2/4" in text and "best 1.5" in text
    assert text.endswith("\n")


def test_in_a_pipe_or_when_disabled_nothing_is_written():
    for bar in (ProgressBar(4, stream=io.StringIO()), ProgressBar(4, stream=FakeTerminal(), enabled=False)):
        with bar:
            bar.update()
        assert bar.stream.getvalue() == ""
