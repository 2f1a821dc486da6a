"""rocelab's exceptions. The C++ core raises these through the module's translator.

Every class carries ``code`` (the C++ error code's name) and, for spec problems,
``field``: the dotted path of the offending field (``"switch.ecn.kmin_bytes"``).
"""


class RocelabError(RuntimeError):
    """A failure reported by rocelab's C++ core; the message carries its context."""

    def __init__(self, message, field=None, code=None):
        super().__init__(message)
        self.message = message
        self.field = field
        self.code = code


class SpecError(RocelabError, ValueError):
    """A spec field is unknown, has a bad value or fails a cross-field check.

    ``field`` names the field at fault; for an unknown key the message suggests the
    nearest valid one, as ``rocelab run`` does."""


class UnavailableError(RocelabError):
    """Something needed is missing here: root for the virtual lab, a controller, a library."""


class UnsupportedError(RocelabError):
    """Valid but not implemented, such as backend: lab without a controller."""


class StoreError(RocelabError):
    """The run store could not be opened, read or written."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (or another signal handler's exception) stopped a run.

    The run was stored with status ``interrupted`` and its records so far; ``run`` is
    that partial :class:`rocelab.Run`."""

    def __init__(self, message, run=None):
        super().__init__(message)
        self.run = run
