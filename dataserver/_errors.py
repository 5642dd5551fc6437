"""The exceptions of the data server, its back ends and its clients: one hierarchy, each error
naming the file it is about, under awlineage's `AwlError` so that one ``except AwlError``
(as in the ``awl`` command) reports them all.

`awlineage.errors` imports nothing, and no module of awlineage imports `dataserver` when it
is loaded (only inside the functions that use it), so importing either package first is safe.
"""

from __future__ import annotations

from awlineage.errors import AwlError


class DataServerError(AwlError):
    """Base class of every error raised by `dataserver`."""


class FileNotFoundOnServer(DataServerError, FileNotFoundError):
    """No file of this name is stored.

    Parameters
    ----------
    name
        The file name asked for.
    where
        The storage, for the message (its URL).
    """

    def __init__(self, name: str, where: str = "") -> None:
        self.name = name
        suffix = f" on {where}" if where else ""
        super().__init__(f"file {name!r} is not stored{suffix}")

    def __reduce__(self):  # keeps the exception picklable with its own signature
        return (type(self), (self.name,))


class FileConflictError(DataServerError):
    """A file of this name is stored already, with different content; stored files never
    change.

    Parameters
    ----------
    name
        The file name.
    reason
        Why it conflicts, for the message.
    """

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.reason = reason
        super().__init__(f"file {name!r} cannot be stored: {reason}")

    def __reduce__(self):
        return (type(self), (self.name, self.reason))


class InvalidFileName(DataServerError, ValueError):
    """A file name that no back end accepts.

    Parameters
    ----------
    name
        The rejected name.
    reason
        What is wrong with it.
    """

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.reason = reason
        super().__init__(f"invalid file name {name!r}: {reason}")

    def __reduce__(self):
        return (type(self), (self.name, self.reason))


class CorruptFileError(DataServerError):
    """The bytes of a file do not have the SHA-256 they should have.

    Parameters
    ----------
    name
        The file name.
    expected
        The recorded or expected SHA-256 (hexadecimal).
    actual
        The SHA-256 of the bytes actually read.
    where
        Where the bad copy is (for the message), such as ``"data server"`` or ``"cache"``.
    """

    def __init__(self, name: str, expected: str, actual: str, where: str = "data server") -> None:
        self.name = name
        self.expected = expected
        self.actual = actual
        self.where = where
        super().__init__(
            f"file {name!r} is corrupt on the {where}: expected SHA-256 {expected}, "
            f"got {actual}"
        )

    def __reduce__(self):
        return (type(self), (self.name, self.expected, self.actual, self.where))


class UploadTooLarge(DataServerError):
    """An upload is larger than the data server accepts.

    Parameters
    ----------
    name
        The file name.
    limit
        The largest accepted size in bytes.
    """

    def __init__(self, name: str, limit: int) -> None:
        self.name = name
        self.limit = limit
        super().__init__(f"file {name!r} is larger than the upload limit of {limit} bytes")

    def __reduce__(self):
        return (type(self), (self.name, self.limit))


class AccessDenied(DataServerError, PermissionError):
    """The data server refused the request: no token, a wrong one, or an operation its
    configuration does not allow."""


class FileInUseError(DataServerError):
    """A file that a committed object refers to cannot be deleted.

    Parameters
    ----------
    name
        The file name.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"file {name!r} cannot be deleted: a committed object refers to it")

    def __reduce__(self):
        return (type(self), (self.name,))


class ServerConfigError(DataServerError, ValueError):
    """A data server or storage setting is missing or malformed; the message names it."""


class _FileProblem(DataServerError):
    """A refused body of file `name`: which `problem` (a word clients can test) and the
    `reason`, for the message (`message` words it)."""

    def __init__(self, name: str, problem: str, reason: str) -> None:
        self.name = name
        self.problem = problem
        self.reason = reason
        super().__init__(self.message())

    def message(self) -> str:
        """The error's text."""
        raise NotImplementedError

    def __reduce__(self):
        return (type(self), (self.name, self.problem, self.reason))


class TrailerError(_FileProblem):
    """A body that should carry its lineage does not: the trailer's magic, the lineage's
    length or the lineage's SHA-256 is wrong (`problem`: ``"magic"``, ``"length"`` or
    ``"hash"``)."""

    def message(self) -> str:
        """The error's text."""
        return (f"file {self.name!r} does not carry a valid lineage trailer "
                f"({self.problem}): {self.reason}; nothing was stored")


class LineageRejected(_FileProblem):
    """A lineage that must not be stored: not a bundle that verifies (``"bundle"``), no
    DataObject for this file with the file's SHA-256 (``"object"``), or one the database
    refuses (``"import"``: an id held here by another object). Nothing was stored."""

    def message(self) -> str:
        """The error's text."""
        return (f"the lineage of file {self.name!r} was refused ({self.problem}): "
                f"{self.reason}; nothing was stored")


class LineageNotFound(DataServerError):
    """The file is stored but no stored object has it, so it has no lineage to send.

    Parameters
    ----------
    name
        The file name.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"no stored object has file {name!r}: the data server has no "
                         "lineage to send with it")

    def __reduce__(self):
        return (type(self), (self.name,))
