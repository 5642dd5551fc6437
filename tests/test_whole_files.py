"""Output written whole (a temporary file renamed over the target) keeps what users expect of
``open(path, "w")``: a stream is written through, a symbolic link is followed and kept, and a
replaced file keeps its permissions."""

from __future__ import annotations

import os
import stat
import threading

from awlineage.whole_files import existing_file, is_stream, write_whole


def test_a_named_pipe_is_written_through_not_replaced(tmp_path) -> None:
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_bytes()))
    reader.start()
    assert is_stream(pipe) and not existing_file(pipe)
    write_whole(pipe, b"through the pipe\n")
    reader.join(timeout=10)
    assert received == [b"through the pipe\n"]
    assert stat.S_ISFIFO(os.lstat(pipe).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


def test_devices_and_descriptors_are_streams(tmp_path) -> None:
    regular = tmp_path / "out.json"
    regular.write_text("")
    with regular.open("rb") as handle:  # /dev/fd/N leads to a regular file: still a stream
        assert is_stream(f"/dev/fd/{handle.fileno()}")
    assert is_stream("/dev/null") and is_stream("/dev/stdout")
    assert not is_stream(regular) and existing_file(regular)
    assert not is_stream(tmp_path / "nothing yet") and not existing_file(tmp_path / "nothing")
    write_whole("/dev/null", b"gone")  # no temporary file in /dev, no rename over the device


def test_a_link_is_followed_and_kept_and_a_replaced_file_keeps_its_mode(tmp_path) -> None:
    target = tmp_path / "e.prov"
    target.write_text("old\n")
    target.chmod(0o600)
    link = tmp_path / "link.json"
    link.symlink_to(target.name)
    write_whole(link, b"new\n")
    assert link.is_symlink() and target.read_text() == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e.prov", "link.json"]
