"""The S3 back end uses private upload methods of the `minio` client (see
`dataserver._s3_upload` for which and why). These tests fail when the installed client is
outside the pinned range or those methods change shape, before an upload does."""

from __future__ import annotations

import configparser
import inspect
from importlib.metadata import version
from pathlib import Path

from minio import Minio
from packaging.requirements import Requirement

from dataserver._s3_upload import MINIO_VERSIONS

ROOT = Path(__file__).resolve().parents[2]

PRIVATE_METHODS = {
    "_put_object": ["bucket_name", "object_name", "data", "headers", "query_params"],
    "_create_multipart_upload": ["bucket_name", "object_name", "headers"],
    "_upload_part": ["bucket_name", "object_name", "data", "headers", "upload_id",
                     "part_number"],
    "_abort_multipart_upload": ["bucket_name", "object_name", "upload_id"],
    "_execute": ["method", "bucket_name", "object_name", "body", "headers", "query_params",
                 "preload_content", "no_body_trace"],
    # Used by the tests only, to see incomplete uploads behind S3Storage's back.
    "_list_multipart_uploads": ["bucket_name", "delimiter", "encoding_type", "key_marker",
                                "max_uploads", "prefix", "upload_id_marker",
                                "extra_headers", "extra_query_params"],
}


def test_setup_cfg_s3_extra_pins_the_minio_versions_the_s3_upload_is_written_for():
    setup = configparser.ConfigParser()
    setup.read(ROOT / "setup.cfg")
    requirements = [Requirement(line) for line in
                    setup["options.extras_require"]["s3"].split("\n") if line.strip()]
    (minio,) = [r for r in requirements if r.name == "minio"]
    assert minio.specifier == Requirement(f"minio{MINIO_VERSIONS}").specifier


def test_the_installed_minio_is_a_pinned_version():
    installed = version("minio")
    assert Requirement(f"minio{MINIO_VERSIONS}").specifier.contains(installed), installed


def test_the_private_upload_methods_take_their_arguments_by_position_as_in_minio_7_2():
    for method, parameters in PRIVATE_METHODS.items():
        signature = inspect.signature(getattr(Minio, method))
        positional = [p.name for p in signature.parameters.values()
                      if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD][1:]
        keyword_only = [p.name for p in signature.parameters.values()
                        if p.kind is inspect.Parameter.KEYWORD_ONLY
                        and p.default is inspect.Parameter.empty]
        assert (positional, keyword_only) == (parameters, []), method


def test_a_multipart_upload_id_and_part_etags_come_back_as_strings(raw_minio, s3_storage):
    bucket = s3_storage.bucket
    upload_id = raw_minio._create_multipart_upload(bucket, "probe.dat", {})
    try:
        etag = raw_minio._upload_part(bucket, "probe.dat", b"part", None, upload_id, 1)
        assert isinstance(upload_id, str) and upload_id
        assert isinstance(etag, str) and etag
    finally:
        raw_minio._abort_multipart_upload(bucket, "probe.dat", upload_id)
    assert raw_minio._list_multipart_uploads(bucket).uploads == []
