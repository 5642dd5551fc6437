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
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from awlineage.errors import AwlError
from awlineage.federation._records import ObjectRecord
from awlineage.federation._site import Site

FORMAT = "awlineage-bundle"
VERSION = 1
MANIFEST = "bundle.json"


class BundleError(AwlError):
    """A bundle that cannot be used: not a bundle, damaged, or a hash that does not verify.
    Nothing of it is stored."""


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
    """An object's lineage to some depth, ready to travel to another site."""

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

    def write(self, path: str | Path) -> int:
        """Write the bundle to `path`; returns its size in bytes."""
        data = self.to_bytes()
        Path(path).write_bytes(data)
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


def read_bundle(source: bytes | str | Path, *, name: str | None = None) -> Bundle:
    """Read a bundle and verify it: every record's content hash and every file's SHA-256.

    Parameters
    ----------
    source
        The bundle's bytes, or the path of a ``.awlb`` file.
    name
        What to call the bundle in errors (default: the path, or "the bundle").

    Raises
    ------
    BundleError
        Naming what is wrong: not a bundle, a missing field, or the object (class and id) or
        file whose hash does not verify.
    """
    if isinstance(source, (str, Path)):
        label = name or str(source)
        try:
            data = Path(source).read_bytes()
        except OSError as exc:
            raise BundleError(f"cannot read bundle {label}: {exc.strerror}") from None
    else:
        label, data = name or "the bundle", bytes(source)
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        manifest = json.loads(archive.read(MANIFEST))
    except (zipfile.BadZipFile, KeyError, ValueError, EOFError) as exc:
        raise BundleError(f"{label} is not an awlineage bundle (a ZIP archive holding "
                          f"{MANIFEST}): {exc}") from None
    with archive:
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise BundleError(f"{label}: {MANIFEST} is not an awlineage bundle manifest")
        if manifest.get("version") != VERSION:
            raise BundleError(f"{label}: bundle format version {manifest.get('version')!r} "
                              f"is not supported (this awlineage reads version {VERSION})")
        bundle = _parse(manifest, label)
        for file_name, described in manifest.get("files", {}).items():
            try:
                content = archive.read(f"files/{file_name}")
            except KeyError:
                raise BundleError(f"{label}: file {file_name} is listed but missing") from None
            if hashlib.sha256(content).hexdigest() != described.get("sha256"):
                raise BundleError(f"{label}: file {file_name} does not match its SHA-256 "
                                  "(tampered or damaged); nothing was stored")
            bundle.files[file_name] = content
    return bundle


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
    except (KeyError, TypeError, ValueError) as exc:
        raise BundleError(f"{label}: its manifest lacks or garbles {exc}") from None
    for position, item in enumerate(records):
        try:
            record = ObjectRecord.from_json(item)
        except (KeyError, TypeError, ValueError) as exc:
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
        except (KeyError, TypeError, ValueError) as exc:
            raise BundleError(f"{label}: pointer {position} lacks or garbles {exc}") from None
    return bundle
