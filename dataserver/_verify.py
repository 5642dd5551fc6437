"""Checking content against its SHA-256: after a whole-file copy (`check_retrieved`) and
while a stream is read (`VerifyingReader`)."""

from __future__ import annotations

import hashlib
import io
from typing import BinaryIO

from dataserver._errors import CorruptFileError


def check_retrieved(name: str, actual: str, recorded: str | None, expected: str | None) -> None:
    """Raise unless bytes of SHA-256 `actual` are the right content of file `name`.

    Parameters
    ----------
    name
        The file name, for the message.
    actual
        SHA-256 of the bytes read.
    recorded
        The SHA-256 the data server recorded when the file was stored (None if unknown).
    expected
        The SHA-256 the caller expects (a DataObject's ``content_hash``), or None. When
        given, it decides: the bytes are right exactly when they have it.

    Raises
    ------
    CorruptFileError
        Naming the file, the hash it should have and the hash it has.
    """
    if expected is not None:
        if actual != expected.lower():
            raise CorruptFileError(name, expected.lower(), actual)
    elif recorded is not None and actual != recorded:
        raise CorruptFileError(name, recorded, actual)


class VerifyingReader(io.RawIOBase):
    """A stream that hashes what is read through it and, at its end, raises
    `CorruptFileError` if the content does not have the expected SHA-256.

    Parameters
    ----------
    stream
        The whole file, from its start.
    name
        The file name, for the error.
    expected
        The SHA-256 the content must have.
    """

    def __init__(self, stream: BinaryIO, name: str, expected: str) -> None:
        super().__init__()
        self._stream = stream
        self._name = name
        self._expected = expected.lower()
        self._digest = hashlib.sha256()
        self._checked = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        view = memoryview(buffer).cast("B")
        data = self._stream.read(len(view))
        if not data:
            if not self._checked:
                self._checked = True
                actual = self._digest.hexdigest()
                if actual != self._expected:
                    raise CorruptFileError(self._name, self._expected, actual)
            return 0
        count = len(data)
        view[:count] = data
        self._digest.update(data)
        return count

    def close(self) -> None:
        if not self.closed:
            self._stream.close()
        super().close()
