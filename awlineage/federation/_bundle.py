"""Bundles: an object, its ancestry to some depth and pointers beyond it, in one file
(``.awlb``), and reading one back with every hash checked.

A bundle is a ZIP archive holding ``bundle.json`` and, when files travel too, ``files/<name>``
for each DataObject's file::

    {"format": "awlineage-bundle", "version": 1,
     "origin": {"site_id", "url", "name"},      the exporting site
     "roots": [ids], "depth": lambda or null, "created": UTC time,
     "classes": {name: class registry entry},
     "records": [{"class", "id", "created", "version", "identity", "values", "links",
                  "lists", "hash"}, ...],
     "pointers": [{"id", "class", "origin_url", "origin_site", "hash"}, ...],
     "origins": {id: {"site_id", "url", "name"}},   records that are copies themselves
     "files": {name: {"size", "sha256"}}}
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from awlineage.federation._bundle_limits import (
    BundleError,
    BundleLimits,
    check_depth,
    check_directory,
    read_member,
)
from awlineage.federation._records import ObjectRecord
from awlineage.federation._site import Site
from awlineage.whole_files import existing_file, write_whole

FORMAT = "awlineage-bundle"
VERSION = 1
MANIFEST = "bundle.json"
_SHA256 = re.compile(r"[0-9a-f]{64}")

__all__ = ["MANIFEST", "Bundle", "BundleError", "BundleLimits", "PointerRecord",
           "check_pointers", "read_bundle"]


@dataclass(frozen=True)
class PointerRecord:
    """An object beyond the bundle's depth: where it is held and the hash of its record."""

    object_id: int
    class_name: str
    origin_url: str | None
    origin_site: str
    content_hash: str

    def to_json(self) -> dict[str, Any]:
        """As written in a bundle."""
        return {"id": self.object_id, "class": self.class_name, "origin_url": self.origin_url,
                "origin_site": self.origin_site, "hash": self.content_hash}


@dataclass
class Bundle:
    """An object's lineage to some depth, ready to travel to another site.

    Made by `export_bundle` or `read_bundle`, written with `write`, stored at another site
    with `import_bundle`.

    Parameters
    ----------
    origin : Site
        The site that made the bundle.
    roots : list of int
        The object ids the bundle was made for.
    depth : int or None
        Links of ancestry included in full; None for all.
    created : str
        When the bundle was made (UTC, ISO 8601).
    classes : dict of str to dict
        The class registry entry of every class of the bundle's objects, by qualified name.
    records : list of ObjectRecord
        The objects, with their values and content hashes.
    pointers : list of PointerRecord
        What the included objects link to beyond `depth`, as pointers to the site holding it.
    origins : dict of int to Site
        The site each copied object came from, when not `origin`.
    files : dict of str to bytes
        The files of included DataObjects, by file name, when exported with them.

    Examples
    --------
    >>> from awlineage import DBObject, connect, export_bundle, persistent, read_bundle
    >>> class Satchel(DBObject):
    ...     label = persistent("What the product is", str, "")
    ...     source = persistent("The product it was made from")
    >>> here = connect("sqlite:///here.db")
    >>> raw = Satchel(label="raw")
    >>> calibrated = Satchel(label="calibrated", source=raw)
    >>> coadd = Satchel(label="coadd", source=calibrated)
    >>> coadd.commit()
    >>> bundle = export_bundle(coadd, depth=1)
    >>> len(bundle.records), len(bundle.pointers), bundle.roots == [coadd.object_id]
    (2, 1, True)
    >>> bundle.summary().startswith("2 objects, 1 pointers, 0 files, depth 1, from site")
    True
    """

    origin: Site
    roots: list[int]
    depth: int | None
    created: str
    classes: dict[str, dict[str, Any]] = field(default_factory=dict)
    records: list[ObjectRecord] = field(default_factory=list)
    pointers: list[PointerRecord] = field(default_factory=list)
    origins: dict[int, Site] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)

    def to_bytes(self) -> bytes:
        """The bundle as a ``.awlb`` file's contents."""
        manifest = {
            "format": FORMAT, "version": VERSION,
            "origin": _site_json(self.origin), "roots": self.roots, "depth": self.depth,
            "created": self.created, "classes": self.classes,
            "records": [r.to_json() for r in self.records],
            "pointers": [p.to_json() for p in self.pointers],
            "origins": {str(k): _site_json(v) for k, v in self.origins.items()},
            "files": {name: {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
                      for name, data in self.files.items()},
        }
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(MANIFEST, json.dumps(manifest, sort_keys=True,
                                                  separators=(",", ":")))
            for name, data in sorted(self.files.items()):
                archive.writestr(f"files/{name}", data, zipfile.ZIP_STORED)
        return buffer.getvalue()

    def write(self, path: str | Path, overwrite: bool = False) -> int:
        """Write the bundle to `path` as a ``.awlb`` file, whole or not at all (a write that
        fails leaves no half-written bundle). An existing file is replaced only when
        `overwrite` is given, as astropy's ``writeto`` and ``awl export --overwrite`` do; a
        stream such as ``/dev/stdout`` is written through.

        Parameters
        ----------
        path : str or pathlib.Path
            Where to write it.
        overwrite : bool, optional
            Replace a file that is already at `path` (it keeps its permissions).

        Returns
        -------
        int
            The size of the file in bytes.

        Raises
        ------
        FileExistsError
            When a file is at `path` and `overwrite` is not given (nothing is written).
        OSError
            When the file cannot be written.

        Examples
        --------
        >>> from awlineage import DBObject, connect, export_bundle, persistent
        >>> class Satchel(DBObject):
        ...     label = persistent("What the product is", str, "")
        >>> here = connect("sqlite:///here.db")
        >>> satchel = Satchel(label="coadd")
        >>> satchel.commit()
        >>> size = export_bundle(satchel).write("satchel.awlb")
        >>> from pathlib import Path
        >>> size == Path("satchel.awlb").stat().st_size
        True
        """
        if existing_file(path) and not overwrite:
            raise FileExistsError(f"{path} exists: pass overwrite=True to replace it")
        data = self.to_bytes()
        write_whole(path, data)
        return len(data)

    def summary(self) -> str:
        """One line: what the bundle holds."""
        return (f"{len(self.records)} objects, {len(self.pointers)} pointers, "
                f"{len(self.files)} files, depth "
                f"{'all' if self.depth is None else self.depth}, from "
                f"{self.origin.describe()}")


def _site_json(site: Site) -> dict[str, Any]:
    return {"site_id": site.site_id, "url": site.url, "name": site.name}


def _site(data: Any, where: str) -> Site:
    try:
        return Site(str(data["site_id"]), data.get("url"), str(data.get("name") or ""))
    except (KeyError, TypeError, AttributeError):
        raise BundleError(f"{where}: not a site (site_id, url, name)") from None


def read_bundle(source: bytes | str | Path, *, name: str | None = None,
                limits: BundleLimits | None = None) -> Bundle:
    """Read a bundle and verify it.

    Every record's content hash, every pointer's hash and every file's SHA-256 is checked,
    within `limits`.

    The ZIP's directory is checked against `limits` (member count, uncompressed sizes,
    compression ratio) before anything is decompressed, and the manifest's nesting depth
    before it is parsed, so a hostile bundle is refused in a few megabytes of memory.

    Parameters
    ----------
    source : bytes or str or pathlib.Path
        The bundle's bytes, or the path of a ``.awlb`` file.
    name : str, optional
        What to call the bundle in errors (default: the path, or "the bundle").
    limits : BundleLimits, optional
        How much the bundle may hold (default: `BundleLimits()`).

    Returns
    -------
    Bundle
        The verified bundle.

    Raises
    ------
    BundleError
        Naming what is wrong: not a bundle, a member over a limit (naming the member and the
        limit), a missing field, a malformed pointer, or the object (class and id) or file
        whose hash does not verify.

    Examples
    --------
    >>> from awlineage import DBObject, connect, export_bundle, persistent, read_bundle
    >>> class Satchel(DBObject):
    ...     label = persistent("What the product is", str, "")
    ...     source = persistent("The product it was made from")
    >>> here = connect("sqlite:///here.db")
    >>> raw = Satchel(label="raw")
    >>> calibrated = Satchel(label="calibrated", source=raw)
    >>> coadd = Satchel(label="coadd", source=calibrated)
    >>> coadd.commit()
    >>> size = export_bundle(coadd, depth=1).write("coadd.awlb")
    >>> bundle = read_bundle("coadd.awlb")
    >>> len(bundle.records), bundle.roots == [coadd.object_id]
    (2, True)
    """
    limits = limits or BundleLimits()
    label = name or (str(source) if isinstance(source, (str, Path)) else "the bundle")
    try:
        # a path is read member by member, never whole
        archive = zipfile.ZipFile(source if isinstance(source, (str, Path))
                                  else io.BytesIO(source))
    except OSError as exc:
        raise BundleError(f"cannot read bundle {label}: {exc.strerror or exc}") from None
    except (zipfile.BadZipFile, ValueError, EOFError) as exc:
        raise BundleError(f"{label} is not an awlineage bundle (a ZIP archive holding "
                          f"{MANIFEST}): {exc}") from None
    with archive:
        check_directory(archive, label, limits)
        try:
            text, _ = read_member(archive, MANIFEST, label, limits.manifest_bytes,
                                  "BundleLimits.manifest_bytes")
        except KeyError:
            raise BundleError(f"{label} is not an awlineage bundle (a ZIP archive holding "
                              f"{MANIFEST}): it has no {MANIFEST}") from None
        check_depth(text, label, MANIFEST, limits)
        try:
            # decoded first: json.loads would take UTF-16 or UTF-32 bytes too, in which the
            # depth scan above could not see where strings end
            manifest = json.loads(text.decode("utf-8"))
        except ValueError as exc:
            raise BundleError(f"{label}: {MANIFEST} is not JSON in UTF-8: {exc}") from None
        del text
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise BundleError(f"{label}: {MANIFEST} is not an awlineage bundle manifest")
        if manifest.get("version") != VERSION:
            raise BundleError(f"{label}: bundle format version {manifest.get('version')!r} "
                              f"is not supported (this awlineage reads version {VERSION})")
        bundle = _parse(manifest, label)
        files = manifest.get("files", {})
        if not isinstance(files, dict):
            raise BundleError(f"{label}: its manifest's files is not an object of "
                              "name: {size, sha256}")
        for file_name, described in files.items():
            if not isinstance(described, dict):
                raise BundleError(f"{label}: file {file_name} is not described by "
                                  "{size, sha256}")
            try:
                content, sha256 = read_member(archive, f"files/{file_name}", label,
                                              limits.total_bytes, "BundleLimits.total_bytes")
            except KeyError:
                raise BundleError(f"{label}: file {file_name} is listed but missing") from None
            if sha256 != described.get("sha256"):
                raise BundleError(f"{label}: file {file_name} does not match its SHA-256 "
                                  "(tampered or damaged); nothing was stored")
            bundle.files[file_name] = content
    check_pointers(bundle, label)
    return bundle


def check_pointers(bundle: Bundle, label: str = "the bundle") -> None:
    """Refuse a bundle with a pointer whose hash is wrong.

    A pointer's hash must be a SHA-256 (64 lower-case hex digits) that agrees with the record
    of the same object in the bundle and with any other pointer to it.

    Parameters
    ----------
    bundle : Bundle
        The bundle read.
    label : str, optional
        What the bundle is called in the error message.

    Raises
    ------
    BundleError
        Naming the pointer (class and id) and what is wrong with it.
    """
    held = {r.object_id: r.content_hash for r in bundle.records}
    seen: dict[int, str] = {}
    for pointer in bundle.pointers:
        what = f"{label}: pointer to {pointer.class_name} {pointer.object_id}"
        if not _SHA256.fullmatch(pointer.content_hash):
            raise BundleError(f"{what} has hash {pointer.content_hash[:80]!r}, not a SHA-256 "
                              "(64 lower-case hex digits); nothing was stored")
        expected = held.get(pointer.object_id, seen.get(pointer.object_id))
        if expected is not None and expected != pointer.content_hash:
            raise BundleError(f"{what} says its hash is {pointer.content_hash[:16]}..., but "
                              f"the bundle holds it with hash {expected[:16]}... (tampered "
                              "or damaged); nothing was stored")
        seen[pointer.object_id] = pointer.content_hash


def _parse(manifest: dict[str, Any], label: str) -> Bundle:
    try:
        bundle = Bundle(
            origin=_site(manifest["origin"], f"{label}: origin"),
            roots=[int(r) for r in manifest["roots"]],
            depth=None if manifest["depth"] is None else int(manifest["depth"]),
            created=str(manifest["created"]),
            classes=dict(manifest["classes"]),
            origins={int(k): _site(v, f"{label}: origin of {k}")
                     for k, v in manifest.get("origins", {}).items()},
        )
        records = manifest["records"]
        pointers = manifest["pointers"]
        if not isinstance(records, list) or not isinstance(pointers, list):
            raise TypeError("records and pointers (lists)")
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise BundleError(f"{label}: its manifest lacks or garbles {exc}") from None
    for position, item in enumerate(records):
        try:
            record = ObjectRecord.from_json(item)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise BundleError(f"{label}: record {position} lacks or garbles {exc}") from None
        if record.computed_hash() != record.content_hash:
            raise BundleError(
                f"{label}: {record.class_name} {record.object_id} does not match its content "
                f"hash {record.content_hash[:16]}... (tampered or damaged); nothing was stored")
        if record.class_name not in bundle.classes:
            raise BundleError(f"{label}: {record.class_name} {record.object_id} has no class "
                              "registry entry in the bundle")
        bundle.records.append(record)
    for position, item in enumerate(pointers):
        try:
            bundle.pointers.append(PointerRecord(
                int(item["id"]), str(item["class"]), item.get("origin_url"),
                str(item["origin_site"]), str(item["hash"])))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise BundleError(f"{label}: pointer {position} lacks or garbles {exc}") from None
    return bundle
