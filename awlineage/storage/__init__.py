"""Which data server a session stores files on, the local cache files are retrieved into,
and which files committed objects refer to. The only part of awlineage that talks to the
`dataserver` package."""

from awlineage.storage._references import (
    DatabaseReferences,
    is_referenced,
    referenced_among,
    referenced_filenames,
)
from awlineage.storage._session import (
    cache_directory,
    current_data_server,
    file_cache,
    forget_data_server,
    use_data_server,
)

__all__ = [
    "DatabaseReferences",
    "cache_directory",
    "current_data_server",
    "file_cache",
    "forget_data_server",
    "is_referenced",
    "referenced_among",
    "referenced_filenames",
    "use_data_server",
]
