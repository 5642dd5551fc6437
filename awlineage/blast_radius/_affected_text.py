"""The blast radius as text: counts per class first, then a table of what was reached (the
cells of every array and the rows of every table, or each descendant)."""

from __future__ import annotations

from awlineage.blast_radius._affected_answer import BlastRadius

ROW_WIDTH = 100
"""Characters of a table line before the row numbers wrap."""


def render_blast_radius(answer: BlastRadius) -> str:
    """`answer` as lines: a title, the counts per class, then the details.

    Parameters
    ----------
    answer : BlastRadius
        What `affected` returned.

    Returns
    -------
    str
        The text ``awl affected`` prints (without ``--json``).
    """
    source = answer.source
    what = f"{type(source).__name__} {source.object_id}"
    if answer.cells is not None:
        what += f" cells {answer.cells.summary()} of HDU {answer.cells.hdu}"
    lines = [f"blast radius of {what}: {len(answer)} object{'s' if len(answer) != 1 else ''}"
             f" ({'region lineage' if answer.fine else 'every descendant'})"]
    counts = answer.counts()
    width = max((len(str(n)) for n in counts.values()), default=1)
    lines += [f"  {n:>{width}d} {name}" for name, n in counts.items()]
    if not answer.fine:
        lines += ["", f"{'class':24s} {'object_id':>20s}  version"]
        lines += [f"{type(o).__name__:24s} {o.object_id:20d}  v{o.version}"
                  for o in answer.objects]
        return "\n".join(lines)
    lines += ["", f"{'class':24s} {'object_id':>20s} {'hdu':>5s} {'cells':>9s}  "
              "within (x0:x1,y0:y1, FITS)"]
    for array in answer.arrays:
        lines.append(f"{type(array.obj).__name__:24s} {array.obj.object_id:20d} "
                     f"{array.hdu!s:>5s} {array.region.count():9d}  {array.bounds_text()}")
    for rows in answer.rows:
        table = rows.table.obj
        lines += ["", f"rows of {type(table).__name__} {table.object_id} HDU "
                  f"{rows.table.hdu}: {len(rows.objects)}",
                  f"{'class':24s} {'object_id':>20s} {'row':>7s}"]
        lines += [f"{type(o).__name__:24s} {o.object_id:20d} {getattr(o, 'number', ''):>7}"
                  for o in rows.objects]
    return "\n".join(lines)
