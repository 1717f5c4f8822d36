"""Repair a hand-in's notebook structure against the release before nbgrader sees it.

nbgrader 0.9.6 crashes (and the whole notebook then scores zero as "grader error") on some ordinary edits:

* a deleted test cell whose predecessor in the release is a locked-only cell: ``KeyError`` in
  ``OverwriteCells.add_missing_grade_cells`` (it only indexes grade/solution cells);
* a duplicated test cell: ``DeduplicateIds`` empties the copy's metadata and
  ``add_missing_task_cells`` then reads ``["grade_id"]`` of it: ``KeyError: 'grade_id'``;
* a changed grade_id: the cell loses its id, its test is re-added elsewhere or lost;
* metadata that is not a dict (``"metadata": []``, ``"nbgrader": "x"``): ``AttributeError``.

A hand-in of an earlier release may carry a grade id that was renamed since (ids that showed an answer:
``autograder/grade/ids.py``); it is renamed first ("renamed old grade id X -> Y"), so it keeps its points.

:func:`normalize` fixes each, in this order: cell and metadata shapes, altered grade_ids (a cell with an
unknown id takes the id of the first missing release cell of the same kind after its predecessor),
nbgrader metadata of known cells (the release's flags and points), duplicates of test/locked cells (a test
cell keeps its last copy, others their first; a duplicated answer cell's extra copies become plain cells
so their code still runs), cells that lost their metadata recognised where they stand (by source; a graded
answer by its neighbours), then missing locked, test and graded cells, re-inserted from the release right
after the closest preceding release cell present. Each repair is returned as one English line for the
review column. Locked and test cell *sources* are restored by nbgrader itself (OverwriteCells).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from autograder import cells as nbcells
from autograder.grade.ids import renames

CELL_TYPES = ("code", "markdown", "raw")


def _restorable(cell: dict) -> bool:
    """Cells nbgrader needs in every hand-in: locked, test, task and graded answer cells."""
    m = nbcells.meta(cell)
    return nbcells.role(cell) in ("test", "locked", "task") or (nbcells.role(cell) == "answer" and bool(m.get("grade")))


def _fresh_copy(cell: dict) -> dict:
    new = copy.deepcopy(cell)
    if new.get("cell_type") == "code":
        new["outputs"] = []
        new["execution_count"] = None
    return new


def _fix_shapes(cells, repairs: list[str]) -> list[dict]:
    out = []
    for idx, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") not in CELL_TYPES:
            repairs.append(f"dropped cell {idx}: not a notebook cell")
            continue
        if not isinstance(cell.get("metadata"), dict):
            repairs.append(f"cell {idx}: metadata was not a dict")
            cell["metadata"] = {}
        if "nbgrader" in cell["metadata"]:
            m = cell["metadata"]["nbgrader"]
            if not isinstance(m, dict) or not isinstance(m.get("grade_id"), str) or not m.get("grade_id"):
                repairs.append(f"cell {idx}: unreadable nbgrader metadata removed")
                del cell["metadata"]["nbgrader"]
        src = cell.get("source", "")
        if isinstance(src, list) and all(isinstance(s, str) for s in src):
            cell["source"] = "".join(src)
        elif not isinstance(src, str):
            repairs.append(f"cell {idx}: source was not text")
            cell["source"] = ""
        if cell["cell_type"] == "code":
            if not isinstance(cell.get("outputs"), list):
                cell["outputs"] = []
            cell.setdefault("execution_count", None)
        else:
            cell.pop("outputs", None)
            cell.pop("execution_count", None)
        out.append(cell)
    return out


def _rename_old_ids(cells: list[dict], old_to_new: dict[str, str], repairs: list[str]) -> None:
    for cell in cells:
        gid = nbcells.grade_id(cell)
        if gid in old_to_new:
            cell["metadata"]["nbgrader"]["grade_id"] = old_to_new[gid]
            repairs.append(f"renamed old grade id {gid} -> {old_to_new[gid]}")


def _restore_ids(cells: list[dict], rel_ids: list[str], rel_by_id: dict, repairs: list[str]) -> None:
    present = {g for g in map(nbcells.grade_id, cells) if g in rel_by_id}
    anchor = -1  # release index of the last cell seen with a known id
    for cell in cells:
        gid = nbcells.grade_id(cell)
        if gid in rel_by_id:
            anchor = max(anchor, rel_ids.index(gid))
            continue
        if gid is None:
            continue
        want = nbcells.role(cell)
        pick = next((g for g in rel_ids[anchor + 1:] if g not in present and nbcells.role(rel_by_id[g]) == want), None)
        if pick is not None:
            repairs.append(f"restored grade_id {pick} (was {gid!r})")
            cell["metadata"]["nbgrader"]["grade_id"] = pick
            present.add(pick)
            anchor = rel_ids.index(pick)
        else:
            repairs.append(f"removed unknown grade_id {gid!r} (no release cell of its kind is missing)")
            del cell["metadata"]["nbgrader"]


def _restore_metadata(cells: list[dict], rel_by_id: dict, repairs: list[str]) -> None:
    for cell in cells:
        gid = nbcells.grade_id(cell)
        if gid not in rel_by_id:
            continue
        want = copy.deepcopy(rel_by_id[gid]["metadata"]["nbgrader"])
        have = cell["metadata"]["nbgrader"]
        keys = ("grade", "solution", "locked", "task", "points", "schema_version")
        if any(have.get(k) != want.get(k) for k in keys if k in want or k in have):
            repairs.append(f"restored the nbgrader metadata of {gid}")
            cell["metadata"]["nbgrader"] = want


def _drop_duplicates(cells: list[dict], repairs: list[str]) -> list[dict]:
    positions: dict[str, list[int]] = {}
    for idx, cell in enumerate(cells):
        gid = nbcells.grade_id(cell)
        if gid is not None:
            positions.setdefault(gid, []).append(idx)
    drop, plain = set(), set()
    for gid, idxs in positions.items():
        if len(idxs) < 2:
            continue
        k = nbcells.role(cells[idxs[0]])
        keep = idxs[-1] if k == "test" else idxs[0]
        for i in idxs:
            if i == keep:
                continue
            if k == "answer":
                plain.add(i)
            else:
                drop.add(i)
        what = "answer cell (extra copies kept as plain cells)" if k == "answer" else f"{k} cell"
        repairs.append(f"dropped {len(idxs) - 1} duplicate(s) of {what} {gid}")
    out = []
    for idx, cell in enumerate(cells):
        if idx in drop:
            continue
        if idx in plain:
            del cell["metadata"]["nbgrader"]
        out.append(cell)
    return out


def _squeezed(cell: dict) -> str:
    return "".join(nbcells.source(cell).split())


def _adopt_unmarked(cells: list[dict], rel_cells: list[dict], repairs: list[str]) -> None:
    """Cells that lost their nbgrader metadata (a notebook rebuilt by copying cells, a tool that drops cell
    metadata) get it back where they stand: a plain cell whose source is a missing locked or test cell's
    (whitespace aside) is that cell; then a missing graded answer cell whose two release neighbours are
    present with exactly one plain cell of its type between them is that cell. What is adopted keeps its
    place, so the student's answers still run before the tests that read them."""
    def present():
        return {g: i for i, g in enumerate(map(nbcells.grade_id, cells)) if g is not None}

    plain = [i for i, c in enumerate(cells) if not nbcells.meta(c)]
    for rcell in rel_cells:
        gid = nbcells.grade_id(rcell)
        if gid is None or gid in present() or nbcells.role(rcell) not in ("locked", "test", "task"):
            continue
        want = _squeezed(rcell)
        match = next((i for i in plain if cells[i]["cell_type"] == rcell["cell_type"] and _squeezed(cells[i]) == want
                      and want), None)
        if match is not None:
            plain.remove(match)
            cells[match]["metadata"]["nbgrader"] = copy.deepcopy(rcell["metadata"]["nbgrader"])
            repairs.append(f"cell {match} recognised as {nbcells.role(rcell)} cell {gid} (its nbgrader metadata "
                           "was missing)")
    rel_gids = [nbcells.grade_id(c) for c in rel_cells]
    for r_idx, rcell in enumerate(rel_cells):
        gid = rel_gids[r_idx]
        if gid is None or gid in present() or not (nbcells.role(rcell) == "answer" and nbcells.is_grade(rcell)):
            continue
        where = present()
        before = next((where[g] for g in reversed(rel_gids[:r_idx]) if g in where), -1)
        after = next((where[g] for g in rel_gids[r_idx + 1:] if g in where), len(cells))
        between = [i for i in plain if before < i < after and cells[i]["cell_type"] == rcell["cell_type"]]
        if len(between) == 1 and (before >= 0 or after < len(cells)):
            i = between[0]
            plain.remove(i)
            cells[i]["metadata"]["nbgrader"] = copy.deepcopy(rcell["metadata"]["nbgrader"])
            repairs.append(f"cell {i} recognised as answer cell {gid} (its nbgrader metadata was missing)")


def _restore_missing(cells: list[dict], rel_cells: list[dict], repairs: list[str]) -> list[dict]:
    for r_idx, rcell in enumerate(rel_cells):
        gid = nbcells.grade_id(rcell)
        if gid is None or not _restorable(rcell):
            continue
        where = {g: i for i, g in enumerate(map(nbcells.grade_id, cells)) if g is not None}
        if gid in where:
            continue
        before = [g for g in (nbcells.grade_id(c) for c in rel_cells[:r_idx]) if g in where]
        pos = where[before[-1]] + 1 if before else 0
        cells.insert(pos, _fresh_copy(rcell))
        repairs.append(f"restored missing {nbcells.role(rcell)} cell {gid}")
    return cells


def normalize(nb, release_nb: dict, notebook: str | None = None) -> tuple[dict, list[str]]:
    """Return (repaired notebook, repairs). ``nb`` is not modified; an unusable one is replaced by the release.

    ``notebook`` (``<assignment>/<notebook stem>``) picks that notebook's table of renamed grade ids.
    """
    repairs: list[str] = []
    rel_cells = [c for c in release_nb.get("cells", []) if isinstance(c, dict)]
    rel_by_id = {g: c for c in rel_cells if (g := nbcells.grade_id(c))}
    rel_ids = [g for g in map(nbcells.grade_id, rel_cells) if g]
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        return _fresh_release(release_nb), ["notebook unreadable (no cell list): graded as the blank release"]
    nb = copy.deepcopy(nb)
    if not isinstance(nb.get("metadata"), dict):
        repairs.append("notebook metadata was not a dict")
        nb["metadata"] = copy.deepcopy(release_nb.get("metadata", {}))
    cells = _fix_shapes(nb["cells"], repairs)
    _rename_old_ids(cells, renames(notebook, rel_by_id), repairs)
    _restore_ids(cells, rel_ids, rel_by_id, repairs)
    _restore_metadata(cells, rel_by_id, repairs)
    cells = _drop_duplicates(cells, repairs)
    _adopt_unmarked(cells, rel_cells, repairs)
    nb["cells"] = _restore_missing(cells, rel_cells, repairs)
    _unique_cell_ids(nb["cells"])
    return nb, repairs


def _unique_cell_ids(cells: list[dict]) -> None:
    """nbformat 4.5 wants unique cell ids; copies of a cell share one."""
    seen = set()
    for n, cell in enumerate(cells):
        cid = cell.get("id")
        if isinstance(cid, str) and cid and cid not in seen:
            seen.add(cid)
            continue
        if "id" in cell or cid is not None:
            new = f"glnorm-{n}"
            while new in seen:
                new += "x"
            cell["id"] = new
            seen.add(new)


def _fresh_release(release_nb: dict) -> dict:
    nb = copy.deepcopy(release_nb)
    nb["cells"] = [_fresh_copy(c) for c in nb.get("cells", [])]
    return nb


def normalize_file(path: Path, release_path: Path) -> list[str]:
    """Normalize a hand-in notebook file in place against the release notebook; returns the repairs."""
    release_nb = json.loads(Path(release_path).read_text(encoding="utf-8"))
    try:
        nb = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        nb, repairs = _fresh_release(release_nb), [f"notebook unreadable ({type(exc).__name__}): graded as "
                                                  "the blank release"]
    else:
        release_path = Path(release_path)
        nb, repairs = normalize(nb, release_nb, notebook=f"{release_path.parent.name}/{release_path.stem}")
    if repairs:
        Path(path).write_text(json.dumps(nb, ensure_ascii=False, indent=1), encoding="utf-8")
    return repairs
