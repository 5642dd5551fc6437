"""How much a bundle may hold, and reading one within those bounds: the ZIP's directory is
checked (member count, declared sizes, compression ratio) before any member is decompressed,
members are decompressed in bounded chunks, and the manifest's nesting depth is measured
without recursion before it is parsed. A hostile bundle (a ZIP bomb, JSON nested a hundred
thousand deep) is refused with a `BundleError` naming the member and the limit, in a few
megabytes of memory."""

from __future__ import annotations

import hashlib
import io
import re
import zipfile
import zlib
from dataclasses import dataclass
from itertools import accumulate

from awlineage.errors import AwlError

_MiB = 2**20
_CHUNK = _MiB
"""Bytes decompressed at a time: what a member costs in memory beyond its content."""


class BundleError(AwlError):
    """A bundle that cannot be used.

    Raised by `read_bundle` and `import_bundle` for a file that is not a bundle, is damaged,
    exceeds a `BundleLimits` limit, or holds a hash that does not verify; nothing of the
    bundle is stored.

    Examples
    --------
    >>> from awlineage import read_bundle
    >>> try:
    ...     read_bundle(b"not a zip archive")
    ... except BundleError as err:
    ...     print(str(err).split(":")[0])
    the bundle is not an awlineage bundle (a ZIP archive holding bundle.json)
    """


@dataclass(frozen=True)
class BundleLimits:
    """Upper bounds on what one bundle may hold, checked before anything is decompressed.

    The defaults admit any bundle awlineage writes for ordinary lineage (tens of thousands
    of objects, files of a few hundred megabytes) and refuse ZIP bombs and absurd nesting.
    Pass a `BundleLimits` to `read_bundle` or `import_bundle` to change them.
    """

    members: int = 100_000
    """Entries in the ZIP archive (the manifest and one per file)."""
    manifest_bytes: int = 128 * _MiB
    """Uncompressed size of ``bundle.json``."""
    total_bytes: int = 4 * 2**30
    """Uncompressed size of all members together."""
    ratio: float = 100.0
    """Uncompressed size over compressed size of a member; checked for members larger than
    `ratio_floor` (small members of repetitive text compress well and harm nothing)."""
    ratio_floor: int = _MiB
    """Uncompressed size from which a member's compression ratio is checked."""
    depth: int = 32
    """Nesting of arrays and objects in ``bundle.json`` (a bundle written by awlineage nests
    about eight deep)."""


def check_directory(archive: zipfile.ZipFile, label: str, limits: BundleLimits) -> None:
    """Refuse an archive whose directory (read, nothing decompressed) exceeds `limits`."""
    members = archive.infolist()
    if len(members) > limits.members:
        raise BundleError(f"{label}: {len(members)} members in the archive; the limit is "
                          f"{limits.members} (BundleLimits.members); nothing was stored")
    total = 0
    for info in members:
        size = info.file_size
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise BundleError(f"{label}: member {info.filename} is compressed with method "
                              f"{info.compress_type}; bundles use stored or deflated members")
        if info.flag_bits & 0x1:
            raise BundleError(f"{label}: member {info.filename} is encrypted; bundles are not")
        packed = max(info.compress_size, 1)
        if size > limits.ratio_floor and size > limits.ratio * packed:
            raise BundleError(
                f"{label}: member {info.filename} would expand {size / packed:.0f} times"
                f" ({info.compress_size} to {size} bytes); the limit is {limits.ratio:g}"
                " (BundleLimits.ratio): refused as a ZIP bomb; nothing was stored")
        total += size
        if total > limits.total_bytes:
            raise BundleError(f"{label}: its members hold more than {limits.total_bytes} bytes "
                              f"uncompressed (at member {info.filename}; "
                              "BundleLimits.total_bytes); nothing was stored")


def read_member(archive: zipfile.ZipFile, member: str, label: str, limit: int,
                limit_name: str) -> tuple[bytes, str]:
    """The bytes of `member` and their SHA-256 (hex), decompressed a chunk at a time and
    never more than its declared size or `limit` bytes.

    Raises
    ------
    KeyError
        When the archive has no such member.
    BundleError
        When the member exceeds `limit` or is damaged (a bad CRC, a truncated stream).
    """
    info = archive.getinfo(member)
    if info.file_size > limit:
        raise BundleError(f"{label}: member {member} holds {info.file_size} bytes "
                          f"uncompressed; the limit is {limit} ({limit_name}); nothing was "
                          "stored")
    digest = hashlib.sha256()
    content = io.BytesIO()  # getvalue() hands over its buffer: no second copy
    try:
        with archive.open(info) as stream:
            # zipfile stops at the declared size and checks the CRC there, so reading in
            # chunks bounds memory even when the directory lies about a member's size
            while chunk := stream.read(_CHUNK):
                content.write(chunk)
                digest.update(chunk)
                if content.tell() > info.file_size:
                    raise BundleError(f"{label}: member {member} holds more than the "
                                      f"{info.file_size} bytes its directory entry declares; "
                                      "nothing was stored")
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as exc:
        raise BundleError(f"{label}: member {member} is damaged ({exc}); nothing was "
                          "stored") from None
    return content.getvalue(), digest.hexdigest()


# an unterminated string runs to the end, so no text makes the scan restart (and go
# quadratic); valid JSON is unaffected
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")


def json_depth(text: bytes) -> int:
    """The deepest nesting of arrays and objects in the JSON `text`, found without parsing
    it (brackets inside strings do not count); for invalid JSON, an upper bound of what a
    parser reads before it fails."""
    brackets = _STRING.sub(b"", text).translate(None, _NOT_BRACKETS).translate(_STEP)
    return max(accumulate(step - 1 for step in brackets), default=0)


def check_depth(text: bytes, label: str, member: str, limits: BundleLimits) -> None:
    """Refuse JSON `text` nested deeper than `limits.depth` (before a recursive parser meets
    it)."""
    depth = json_depth(text)
    if depth > limits.depth:
        raise BundleError(f"{label}: {member} is nested {depth} deep; the limit is "
                          f"{limits.depth} (BundleLimits.depth); nothing was stored")
