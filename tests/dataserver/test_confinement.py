"""The local back end and the HTTP data server in front of it never reach outside the storage
directory, even when symbolic links in it point out: to a folder (``etc-dir -> outside/``)
or to a file (``secret-link -> outside/secret.txt``). Links that stay inside still work."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest

from dataserver import InvalidFileName, LocalStorage
from dataserver._confine import open_regular
from tests.dataserver.conftest import TOKEN

AUTH = {"Authorization": f"Bearer {TOKEN}"}
SECRET = b"root:x:0:0:the password file"
THROUGH_LINKS = ["etc-dir/secret.txt", "secret-link", "etc-dir/new.dat", "dangling-link"]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the storage directory, holding a file nobody may reach through it."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_bytes(SECRET)
    return folder


@pytest.fixture
def local(tmp_path: Path, outside: Path) -> LocalStorage:
    """A storage directory with links out of it, one link inside it, and one stored file."""
    storage = LocalStorage(tmp_path / "data", durability="none")
    storage.put("sub/inside.dat", b"inside")
    os.symlink(outside, storage.root / "etc-dir")
    os.symlink(outside / "secret.txt", storage.root / "secret-link")
    os.symlink(outside / "missing.dat", storage.root / "dangling-link")
    os.symlink(storage.root / "sub", storage.root / "alias")
    return storage


def untouched(outside: Path) -> bool:
    """True when the outside folder holds just the secret, unchanged, without attributes."""
    secret = outside / "secret.txt"
    attributes = os.listxattr(secret) if hasattr(os, "listxattr") else []
    return (sorted(os.listdir(outside)) == ["secret.txt"] and secret.read_bytes() == SECRET
            and attributes == [])


@pytest.mark.parametrize("name", THROUGH_LINKS)
def test_local_reads_through_a_link_out_of_the_directory_are_refused(local, outside, name,
                                                                      tmp_path):
    for read in (local.stat, local.open, local.local_path,
                 lambda n: local.get(n, tmp_path / "copy")):
        with pytest.raises(InvalidFileName, match="leads outside the storage directory"):
            read(name)
    assert untouched(outside)
    assert not (tmp_path / "copy").exists()


@pytest.mark.parametrize("name", THROUGH_LINKS)
def test_local_writes_through_a_link_out_of_the_directory_are_refused(local, outside, name):
    with pytest.raises(InvalidFileName, match="leads outside the storage directory"):
        local.put(name, b"planted")
    with pytest.raises(InvalidFileName, match="leads outside the storage directory"):
        local.delete(name)
    assert untouched(outside)


def test_local_listing_leaves_out_what_links_lead_to_outside(local):
    assert local.list() == ["sub/inside.dat"]
    assert local.list("etc-dir/") == []
    assert local.list("secret") == []


def test_links_that_stay_inside_the_directory_are_followed(local):
    assert local.open("alias/inside.dat").read() == b"inside"
    assert local.list("alias/") == ["alias/inside.dat"]
    assert local.stat("alias/inside.dat").size == len(b"inside")


def test_a_link_into_the_storages_own_folders_is_refused(local):
    os.symlink(local.root / ".awl-tmp", local.root / "staging-link")
    (local.root / ".awl-tmp" / "put-partial").write_bytes(b"half an upload")
    os.symlink(local.root / ".awl-tmp" / "put-partial", local.root / "partial-link")
    with pytest.raises(InvalidFileName, match="storage's own folders"):
        local.put("staging-link/planted", b"planted")
    with pytest.raises(InvalidFileName, match="storage's own folders"):
        local.open("partial-link")
    assert local.list() == ["sub/inside.dat"]


def test_a_link_put_in_place_after_the_name_was_checked_is_not_opened(local, outside):
    link = local.root / "late-link"
    os.symlink(outside / "secret.txt", link)
    assert open_regular(local.root, link) is None  # as if the check had passed before the link came


def test_a_folder_swapped_for_a_link_after_the_name_was_checked_is_not_entered(local, outside):
    checked = local._path("sub/inside.dat")
    (outside / "inside.dat").write_bytes(SECRET)
    (local.root / "sub").rename(local.root / "sub-moved")
    os.symlink(outside, local.root / "sub")
    assert open_regular(local.root, checked) is None


@pytest.fixture
def client(serve, local, empty_references):
    server = serve(local, references=empty_references)
    with httpx.Client(base_url=server.url, headers=AUTH) as http:
        yield http


@pytest.mark.parametrize("method", ["GET", "HEAD", "PUT", "DELETE"])
@pytest.mark.parametrize("name", THROUGH_LINKS)
def test_http_requests_through_a_link_out_of_the_directory_are_refused_with_400(
        client, outside, method, name):
    response = client.request(method, f"/files/{name}",
                              content=b"planted" if method == "PUT" else None)
    assert response.status_code == 400
    if method != "HEAD":
        assert "leads outside the storage directory" in response.json()["reason"]
        assert SECRET not in response.content
    assert untouched(outside)


@pytest.mark.parametrize("prefix", ["", "etc-dir/", "secret"])
def test_http_listing_leaves_out_what_links_lead_to_outside(client, prefix):
    response = client.get("/files", params={"prefix": prefix})
    assert response.status_code == 200
    listed = [line for line in response.text.splitlines() if line]
    assert all("inside.dat" in line for line in listed)
    assert len(listed) == (1 if prefix == "" else 0)
