"""Sessions (a database and a data server, current in one context), the data server DataObject
files go to by default, the local cache files are retrieved into, and which files committed
objects refer to. The only part of awlineage that talks to the `dataserver` package; it fulfils
the `FileStore` protocol of `awlineage.persistence`."""

from awlineage.persistence import set_default_files
from awlineage.storage._app import data_server_app
from awlineage.storage._defaults import (
    cache_directory,
    check_data_directory,
    default_data_server,
    file_cache,
    forget_data_server,
    open_data_server,
    use_data_server,
)
from awlineage.storage._files import DataServerFiles, DefaultFiles
from awlineage.storage._references import (
    DatabaseReferences,
    is_referenced,
    referenced_among,
    referenced_filenames,
)
from awlineage.storage._session import Activation, Session, current_data_server, current_session
from awlineage.storage._verified import verified_files
from dataserver import shown_data_url

set_default_files(DefaultFiles())

__all__ = [
    "Activation",
    "DataServerFiles",
    "DatabaseReferences",
    "DefaultFiles",
    "Session",
    "cache_directory",
    "check_data_directory",
    "current_data_server",
    "current_session",
    "data_server_app",
    "default_data_server",
    "file_cache",
    "forget_data_server",
    "is_referenced",
    "open_data_server",
    "referenced_among",
    "referenced_filenames",
    "shown_data_url",
    "use_data_server",
    "verified_files",
]
