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
    group_siblings: int = 3
    """Same-class siblings drawn as one group node from this many on."""
    staleness_targets: int = 5_000
    """Targets the planner may read to colour a lineage graph; past it states are unknown."""
    preview_pixels: int = 1024
    """The longest side of a preview image, in pixels; larger images are binned down."""
    thumbnail_pixels: int = 240
    """The longest side of the thumbnails on the pixels page."""
    preview_cache_bytes: int = 64 * 2**20
    """Bytes of rendered previews kept in memory (least recently used dropped first)."""
    pixel_box_cells: int = 1 << 20
    """The most cells (width x height) a pixels query's box may cover."""
    pixel_images: int = 100
    """Images listed for one pixels query (the rest are counted)."""
    gallery_images: int = 100
    """Images whose cutouts one gallery shows (the rest are counted)."""
    region_boxes: int = 200
    """Boxes of one image's region listed and drawn (the rest are counted)."""
    source_rows: int = 200
    """Rows listed per page of a source list's sources."""
    header_cards: int = 2_000
    """FITS header cards shown per HDU."""
    list_members: int = 200
    """Members of a link list shown on an object page (the rest are counted)."""
    query_text: int = 4_000
    """Characters of a query text."""
    folded_versions: int = 20
    """Older versions of one identity listed under a search result (the rest are counted)."""
    versions: int = 1_000
    """Versions of one identity in its versions table and chart (the newest are kept)."""
    chart_buckets: int = 400
    """Time buckets in a class's reprocessing chart (the newest are kept)."""
    cutout_images: int = 200
    """Image arrays one SODA cutout request may cut (with LINEAGE, every ancestor counts)."""
    cutout_pixels: int = 16_000_000
    """Pixels of one cutout (its bounding box)."""
    cutout_bytes: int = 512 * 2**20
    """Bytes of all the cutouts of one request."""
    cutout_cache: int = 1_000
    """Image headers and WCSs (a few kB each) and request plans the cutout service keeps."""
    request_ids: int = 100
    """ID values one DataLink or SODA request may give; more is refused as a usage error
    before any of them is looked up."""
    request_body_bytes: int = 1 << 20
    """Bytes of a DataLink or SODA POST body (its form-encoded parameters)."""
    parameter_chars: int = 10_000
    """Characters of one SODA parameter value (a polygon of several hundred vertices)."""
    versions_listed: int = 20
    """Other versions of an object's identity listed on its page (the rest are counted)."""
    header_hdus: int = 50
    """HDUs of a FITS file whose headers an object page shows."""
    trace_calls: int = 2_000
    """Calls of a process run's call trace shown on its page (the rest are counted)."""
    tree_depth: int = 8
    """The deepest object tree (levels of links expanded) a request may ask for."""
    tree_nodes: int = 2_000
    """Nodes (attribute values, links, list members) of one object tree answer; past it the
    objects left are shown unexpanded."""
    tree_list_page: int = 25
    """Members of a link list per page of an object tree."""
    sky_footprints: int = 2_000
    """Footprints drawn on one sky map (the rest are counted as left out)."""
    sky_sources: int = 5_000
    """Sources (stored positions) drawn on one sky map."""
