"""What the results with an HTML page share (Comparison, BufferValidation, and a Run's
report): the call that makes them (progress lines, Ctrl-C), the page inline in a
notebook, and saving it with its JSON."""

import json
import os

from .errors import Interrupted
from .progress import ProgressBar


def run_reported(call, label, progress, callback, interrupted):
    """Runs ``call(on_progress)``, a C++ call that reports progress lines and returns
    {json, html, interrupted}, with a step-counting progress bar; ``callback(line)`` gets
    each line. What stopped the call is raised again (Ctrl-C as :class:`rocelab.Interrupted`
    with the message ``interrupted``). Returns (data, html)."""
    bar = ProgressBar(None, label=label, enabled=progress)

    def on_progress(line):
        bar.update(None, note=line)
        if callback is not None:
            callback(line)

    try:
        out = call(on_progress)
    finally:
        bar.close()
    caught = out["interrupted"]
    if caught is not None:
        if isinstance(caught, KeyboardInterrupt):
            raise Interrupted(interrupted, None) from caught
        raise caught
    return json.loads(out["json"]), out["html"]


def html_object(html):
    """``html`` as a notebook shows it: an ``IPython.display.HTML`` (shown when it is a
    cell's value) when IPython is there, else the text itself."""
    try:
        from IPython.display import HTML
    except ImportError:
        return html
    return HTML(html)


class HtmlReport:
    """Mixin: ``self.data`` (the JSON as a dict), ``self.html``, and ``_files`` naming the
    two files ``save`` writes (html name, json name)."""

    _files = ("report.html", "report.json")

    def __init__(self, data, html):
        self.data = data
        self.html = html

    def report(self):
        """The page: inline HTML in a notebook (IPython.display.HTML), else the text."""
        return html_object(self.html)

    def save(self, directory):
        """Writes the page and its JSON into ``directory`` (created); returns it."""
        os.makedirs(directory, exist_ok=True)
        html_name, json_name = self._files
        with open(os.path.join(directory, html_name), "w") as f:
            f.write(self.html)
        with open(os.path.join(directory, json_name), "w") as f:
            json.dump(self.data, f, indent=1)
        return directory

    def _repr_html_(self):
        return self.html
