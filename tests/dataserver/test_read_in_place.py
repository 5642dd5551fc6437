"""`DataObject.retrieve()` reads a local data server's files where they lie, verified (size
on every call, SHA-256 once per file state), and still fetches verified copies into the cache
from S3 and HTTP data servers; on both databases."""

from __future__ import annotations

import os
import uuid

import pytest

from awlineage import DataObject, select
from awlineage.storage._verified import verified_files
from dataserver import CorruptFileError, LocalStorage
from tests.dataserver.conftest import TOKEN, random_bytes


def _stored(data: bytes) -> DataObject:
    obj = DataObject()
    obj.store(data)
    obj.commit()
    return select(DataObject.object_id == obj.object_id).first()


def _files_under(root) -> list[str]:
    return [name for _, _, names in os.walk(root) for name in names]


def test_a_local_servers_file_is_read_in_place_without_a_copy(db, data_server, tmp_path):
    storage = data_server(str(tmp_path / "data"))
    data = random_bytes(50_000, seed=3)
    obj = _stored(data)
    path = obj.retrieve()
    assert path == storage.local_path(obj.filename)
    assert path.read_bytes() == data
    assert _files_under(tmp_path / "cache") == []
    assert obj.retrieve() == path  # again: still in place, still no copy
    assert _files_under(tmp_path / "cache") == []


def test_the_hash_is_remembered_for_the_files_state(db, data_server, tmp_path):
    data_server(str(tmp_path / "data"))
    obj = _stored(b"remember me")
    verified_files.forget()
    obj.retrieve()
    assert len(verified_files) == 1
    obj.retrieve()
    assert len(verified_files) == 1


def test_a_file_this_process_stored_is_known_verified_without_hashing_it_again(
        db, data_server, tmp_path):
    data_server(str(tmp_path / "data"))
    verified_files.forget()
    obj = _stored(b"hashed as it was written")
    assert len(verified_files) == 1
    assert obj.retrieve().read_bytes() == b"hashed as it was written"


def test_a_file_changed_after_this_process_stored_it_is_found(db, data_server, tmp_path):
    storage = data_server(str(tmp_path / "data"))
    obj = _stored(b"good content")
    storage.local_path(obj.filename).write_bytes(b"bad content!")  # same size
    with pytest.raises(CorruptFileError):
        obj.retrieve()


@pytest.mark.parametrize("keep_mtime", [False, True])
def test_a_file_changed_behind_the_databases_back_is_found(db, data_server, tmp_path,
                                                            keep_mtime):
    storage = data_server(str(tmp_path / "data"))
    obj = _stored(b"good content")
    path = obj.retrieve()  # verified and remembered
    before = path.stat()
    path.write_bytes(b"bad content!")  # same size
    if keep_mtime:  # the modification time put back: the change time still tells
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    with pytest.raises(CorruptFileError) as raised:
        obj.retrieve()
    message = str(raised.value)
    assert f"DataObject {obj.object_id}" in message
    assert repr(obj.filename) in message
    assert str(storage.local_path(obj.filename)) in message
    assert obj.content_hash in message


def test_a_truncated_file_is_found_before_it_is_read(db, data_server, tmp_path):
    storage = data_server(str(tmp_path / "data"))
    obj = _stored(b"0123456789" * 100)
    obj.retrieve()
    with open(storage.local_path(obj.filename), "r+b") as stream:
        stream.truncate(10)
    with pytest.raises(CorruptFileError) as raised:
        obj.retrieve()
    message = str(raised.value)
    assert f"DataObject {obj.object_id}" in message
    assert repr(obj.filename) in message
    assert "10 bytes where 1000 were stored" in message


@pytest.fixture(params=["s3", "http+local"])
def remote(request, tmp_path, s3_endpoint, s3_env, serve, data_server, raw_minio):
    """A data server that is not a local directory, and a way to change a stored file
    behind its back."""
    if request.param == "s3":
        bucket = f"inplace-{uuid.uuid4().hex[:16]}"
        data_server(f"s3://{bucket}?endpoint={s3_endpoint}&secure=false")

        def corrupt(name: str, data: bytes) -> None:
            import io

            stat = raw_minio.stat_object(bucket, name)
            raw_minio.put_object(bucket, name, io.BytesIO(data), len(data),
                                 metadata={"sha256": stat.metadata["x-amz-meta-sha256"]})
        return corrupt
    behind = LocalStorage(tmp_path / "behind")
    data_server(serve(behind).url, token=TOKEN)
    return lambda name, data: (behind.root / name).write_bytes(data)


def test_s3_and_http_servers_still_fetch_a_verified_copy_into_the_cache(db, remote, tmp_path):
    data = random_bytes(30_000, seed=4)
    obj = _stored(data)
    path = obj.retrieve()
    assert path.is_relative_to(tmp_path / "cache")
    assert path.read_bytes() == data
    assert obj.retrieve() == path
    path.unlink()  # a copy dropped from the cache is fetched again, and checked
    remote(obj.filename, random_bytes(30_000, seed=5))
    with pytest.raises(CorruptFileError) as raised:
        obj.retrieve()
    assert f"DataObject {obj.object_id}" in str(raised.value)
    assert repr(obj.filename) in str(raised.value)


def test_a_file_replaced_by_another_of_the_same_size_and_mtime_is_found(db, data_server,
                                                                          tmp_path):
    storage = data_server(str(tmp_path / "data"))
    obj = _stored(b"original bytes")
    path = obj.retrieve()
    before = path.stat()
    other = tmp_path / "other"
    other.write_bytes(b"replaced bytes")
    os.utime(other, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(other, storage.local_path(obj.filename))  # a new inode under the same name
    with pytest.raises(CorruptFileError, match=f"DataObject {obj.object_id}"):
        obj.retrieve()


def test_a_file_lost_from_a_local_server_is_not_covered_by_a_cached_copy(db, data_server,
                                                                          tmp_path):
    from awlineage.storage import file_cache
    from dataserver import FileNotFoundOnServer

    storage = data_server(str(tmp_path / "data"))
    data = random_bytes(20_000, seed=5)
    obj = _stored(data)
    elsewhere = LocalStorage(tmp_path / "other-archive")  # another database's, same file
    elsewhere.put(obj.filename, data)
    assert file_cache().fetch(elsewhere, obj.filename, obj.content_hash).read_bytes() == data
    os.remove(storage.local_path(obj.filename))  # lost from this archive
    verified_files.forget()
    with pytest.raises(FileNotFoundOnServer, match=obj.filename):
        obj.retrieve()
