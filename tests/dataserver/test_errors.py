"""Data server errors are awlineage errors: one ``except AwlError`` catches them, and the
``awl`` command reports them in one line; importing either package first works."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import dataserver
from awlineage.cli import main
from awlineage.errors import AwlError
from awlineage.storage import use_data_server
from dataserver import DataServerError
from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[2]


def test_every_data_server_error_is_an_awl_error():
    errors = [getattr(dataserver, name) for name in dataserver.__all__
              if isinstance(getattr(dataserver, name), type)
              and issubclass(getattr(dataserver, name), BaseException)]
    assert len(errors) >= 9
    assert all(issubclass(error, AwlError) for error in errors)


def test_dataserver_imports_first_and_awlineage_errors_imports_without_it():
    script = ("import sys, dataserver, awlineage; "
              "assert issubclass(dataserver.DataServerError, awlineage.AwlError)")
    subprocess.run([sys.executable, "-c", script], cwd=ROOT, check=True)
    alone = "import sys, awlineage.errors; assert 'dataserver' not in sys.modules"
    subprocess.run([sys.executable, "-c", alone], cwd=ROOT, check=True)


def test_awl_reports_an_unreachable_data_server_in_one_line(db, data_server, tmp_path, capsys):
    from awlineage import DataObject

    data_server(str(tmp_path / "data"))
    stored = DataObject()
    stored.store(b"registers the class, so gc goes on to the data server")
    stored.commit()
    url = db.url.render_as_string(hide_password=False)
    argv = ["--database", url, "dataserver", "gc", "--data-url", "http://127.0.0.1:9"]
    if db.schema:
        argv += ["--schema", db.schema]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("awl: DataServerError: data server http://127.0.0.1:9 unreachable")
    assert err.count("\n") == 1


def test_an_unreachable_http_data_server_is_named_without_its_password():
    server = dataserver.HTTPStorage(f"http://reader:s3cret@127.0.0.1:{free_port()}")
    with pytest.raises(DataServerError) as raised:
        server.exists("raw/frame.fits")
    message = str(raised.value)
    assert message.startswith("data server http://127.0.0.1:") and "unreachable" in message
    assert "s3cret" not in message and "reader" not in message


def test_an_s3_server_that_does_not_answer_is_named_with_its_endpoint():
    endpoint = f"127.0.0.1:{free_port()}"
    url = f"s3://frames?endpoint={endpoint}&secure=false"
    with pytest.raises(DataServerError) as raised:
        use_data_server(url)
    message = str(raised.value)
    assert message.startswith(f"data server {url} unreachable: ")
    assert "Connection refused" in message and f"is the S3 server at {endpoint} running?" in message
