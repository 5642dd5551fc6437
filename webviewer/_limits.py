"""The viewer's limits: how much one request may ask for. Each limit that is hit is named in
the response (``limits_hit`` in JSON, a notice on the page)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Upper bounds on what one request returns or computes."""

    page_size: int = 50
    """Search results per page, unless the request asks for fewer."""
    max_page_size: int = 500
    """The most results one page may ask for (``per_page``)."""
    graph_nodes: int = 400
    """Nodes (objects or groups) in one lineage graph; past it the graph is partial."""
    graph_objects: int = 20_000
    """Objects one lineage walk visits before it stops and says the graph is partial."""
    max_depth: int = 50
    """The deepest lineage graph or diff a request may ask for."""
    preview_pixels: int = 1024
    """The longest side of a preview image, in pixels; larger images are binned down."""
    header_cards: int = 2_000
    """FITS header cards shown per HDU."""
    list_members: int = 200
    """Members of a link list shown on an object page (the rest are counted)."""
    query_text: int = 4_000
    """Characters of a query text."""
    versions_listed: int = 20
    """Other versions of an object's identity listed on its page (the rest are counted)."""
    header_hdus: int = 50
    """HDUs of a FITS file whose headers an object page shows."""
    trace_calls: int = 2_000
    """Calls of a process run's call trace shown on its page (the rest are counted)."""
