"""Same code, parameters and inputs, same bytes, on both databases: a forced re-derivation of the
demo's night (one chip, one filter, to stay small) gives every product (master bias and flat,
reduced, regridded and coadded frame, source list) a file identical to the first one's, although
every product is a new object with a new object id."""

from __future__ import annotations

from awlineage import DataObject, TargetProcessor, select
from targets.pipeline import (
    BiasFrame,
    CoaddedRegriddedFrame,
    DomeFlatFrame,
    ReducedScienceFrame,
    RegriddedFrame,
    SourceList,
    ingest,
)

PRODUCTS = (BiasFrame, DomeFlatFrame, ReducedScienceFrame, RegriddedFrame,
            CoaddedRegriddedFrame, SourceList)


def products() -> dict[tuple, list[DataObject]]:
    """Every product by class and identity (a master's chip and night, a reduced frame's raw
    frame, a coadd's pointing and filter ...): the versions of one logical product."""
    found: dict[tuple, list[DataObject]] = {}
    for cls in PRODUCTS:
        for product in select(cls).all():
            identity = tuple(getattr(value, "object_id", value)
                             for value in (getattr(product, name) for name in cls.identity))
            found.setdefault((cls.__name__, *identity), []).append(product)
    return found


def test_a_forced_rederivation_gives_byte_identical_files_for_every_product(db, data_server,
                                                                           night) -> None:
    ingest([path for path in night.paths if "ccd1" in path.name and "_g_" not in path.name])
    processor = TargetProcessor("serial", progress=False)
    first = processor.make(SourceList)
    assert first.made == 11 and not first.failures(), first.summary()
    made_first = {key: versions[0] for key, versions in products().items()}
    assert {key[0] for key in made_first} == {cls.__name__ for cls in PRODUCTS}

    again = TargetProcessor("serial", progress=False).make(SourceList, force_upstream=True)
    assert again.made == first.made and not again.failures(), again.summary()
    differ = []
    for key, versions in products().items():
        old = made_first[key]
        (new,) = [version for version in versions if version.object_id != old.object_id]
        assert new.filename != old.filename  # a new object, a new file ...
        if new.content_hash != old.content_hash:  # ... with the same bytes
            differ.append(f"{key}: {old.filename} {old.content_hash[:12]} -> "
                          f"{new.filename} {new.content_hash[:12]}")
    assert differ == [], "\n".join(differ)
    for product in (new for versions in products().values() for new in versions):
        product.retrieve()  # each file on the data server is the bytes its hash says
