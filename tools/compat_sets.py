"""The pure logic of `make compat`: version sets, the package index's answer, warnings, instruction markers.

Nothing here installs or runs anything: tools/compat.py does that and calls these functions, and
tests/test_compat.py checks them on their own.

A version set is written ``NAME[:REQ,REQ,...]`` (one shell word; the Makefile's ``COMPAT_SETS``):

* ``pinned``                                   the course pins of pyproject.toml's ``course`` extra
* ``colab:triton==3.6.*,numpy==2.1.*,ipywidgets==7.7.*``  newest release matching each specifier
* ``3.8:triton==3.8.*``                        the newest 3.8.x
* ``newest:triton``                            a bare name is the newest release in the index

Every package a set does not name keeps its course pin, and the specifiers are resolved against the
package index when compat runs, so a new triton release is picked up without editing the Makefile.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

# the packages a set's venv gets (the course pins unless the set names another version); torch stays
# the pinned CPU build in every set (it does not depend on triton)
RUNTIME = ("torch", "triton", "numpy", "pandas", "matplotlib", "ipywidgets", "ipykernel", "nbclient",
           "pytest", "pytest-timeout", "hypothesis")
FIXED = ("torch",)
BASELINE = "pinned"

# what a matmul cross-compiles to per target: (summary()["mma"], PTX counts that must be > 0, that must be 0)
EXPECTED_MARKERS = {
    "sm_75": ("fma", ("fma.rn.f32",), ("mma.sync", "wgmma")),
    "sm_80": ("mma.sync", ("mma.sync",), ("wgmma",)),
    "sm_90": ("wgmma", ("wgmma",), ()),
}


@dataclass(frozen=True)
class VersionSet:
    """A set as written: its name and the requirement per package it changes (packaging Requirement)."""

    name: str
    changes: dict = field(default_factory=dict)

    def spec(self) -> str:
        return ",".join(str(r) for r in self.changes.values()) or "course pins"


@dataclass(frozen=True)
class ResolvedSet:
    """A set with one exact version per runtime package; ``names`` lists every set that resolved to it."""

    names: tuple
    versions: dict

    @property
    def name(self) -> str:
        return self.names[0]

    def requirements(self) -> list[str]:
        return [f"{pkg}=={ver}" for pkg, ver in self.versions.items()]

    def label(self, pins: dict) -> str:
        """``triton 3.6.0 · numpy 2.1.3 · ipywidgets 7.7.1``: triton, then every package off its course pin."""
        parts = [f"triton {self.versions['triton']}"]
        parts += [f"{pkg} {ver}" for pkg, ver in self.versions.items() if pkg != "triton" and pins.get(pkg) != ver]
        return " · ".join(parts)


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins_from(course: list[str]) -> dict[str, str]:
    """{package: version} from the ``course`` extra's ``name==version`` lines."""
    out = {}
    for line in course:
        req = Requirement(line)
        exact = [s.version for s in req.specifier if s.operator == "=="]
        if exact:
            out[_norm(req.name)] = exact[0]
    return out


def parse_set(text: str) -> VersionSet:
    """``NAME[:REQ,REQ...]`` → VersionSet; ValueError with the expected form for anything else."""
    name, _, reqs = text.partition(":")
    name = name.strip()
    if not name or not re.fullmatch(r"[\w.+-]+", name):
        raise ValueError(f"version set {text!r}: expected NAME[:REQ,...], e.g. colab:triton==3.6.*,numpy==2.1.*")
    changes = {}
    for part in filter(None, (p.strip() for p in reqs.split(","))):
        try:
            req = Requirement(part)
        except InvalidRequirement as exc:
            raise ValueError(f"version set {name!r}: {part!r} is not a requirement ({exc})") from None
        pkg = _norm(req.name)
        if pkg in FIXED:
            raise ValueError(f"version set {name!r}: {pkg} stays at the course pin in every set")
        if pkg not in RUNTIME:
            raise ValueError(f"version set {name!r}: {pkg} is not one of the runtime packages {', '.join(RUNTIME)}")
        if pkg in changes:
            raise ValueError(f"version set {name!r} names {pkg} twice")
        changes[pkg] = req
    return VersionSet(name, changes)


def parse_index_versions(text: str) -> list[str]:
    """The versions ``pip index versions PKG`` lists (newest first, as pip prints them)."""
    for line in text.splitlines():
        if line.strip().startswith("Available versions:"):
            return [v.strip() for v in line.split(":", 1)[1].split(",") if v.strip()]
    raise ValueError("no 'Available versions:' line in the package index's answer:\n" + text.strip()[-500:])


def newest_matching(req: Requirement, versions: list[str]) -> str:
    """The newest final release in ``versions`` that ``req`` allows (pre-releases only if nothing else)."""
    parsed = []
    for v in versions:
        try:
            parsed.append(Version(v))
        except InvalidVersion:
            continue
    allowed = [v for v in parsed if req.specifier.contains(v, prereleases=True)]
    final = [v for v in allowed if not v.is_prerelease and not v.is_devrelease]
    pick = max(final or allowed, default=None)
    if pick is None:
        shown = ", ".join(versions[:12]) + (", ..." if len(versions) > 12 else "")
        raise ValueError(f"no release of {req.name} matches {req.specifier or 'any'} (index has: {shown or 'none'})")
    return str(pick)


def resolve(sets: list[VersionSet], pins: dict[str, str], available) -> list[ResolvedSet]:
    """One ResolvedSet per distinct version combination, in the order given.

    ``available(pkg)`` returns the index's versions of a package (asked once per package). Sets that
    resolve to the same versions are run once, under all their names (``3.8 = newest`` while 3.8 is the
    newest release).
    """
    missing = [pkg for pkg in RUNTIME if pkg not in pins]
    if missing:
        raise ValueError(f"the course pins lack {', '.join(missing)}")
    cache: dict[str, list[str]] = {}
    out: list[ResolvedSet] = []
    for vs in sets:
        versions = {pkg: pins[pkg] for pkg in RUNTIME}
        for pkg, req in vs.changes.items():
            if pkg not in cache:
                cache[pkg] = available(pkg)
            versions[pkg] = newest_matching(req, cache[pkg])
        same = next((i for i, r in enumerate(out) if r.versions == versions), None)
        if same is None:
            out.append(ResolvedSet((vs.name,), versions))
        elif vs.name not in out[same].names:
            out[same] = ResolvedSet(out[same].names + (vs.name,), versions)
    return out


# ------------------------------------------------------------------------------------------ warnings
_WARNING = re.compile(r"\b([A-Z]\w*Warning): (.+)")
_NOISE = [(re.compile(r"0x[0-9a-fA-F]+"), "0x…"), (re.compile(r"(/[\w.+@-]+)+/"), "…/"),
          (re.compile(r"\b\d+(\.\d+)*\b"), "N"), (re.compile(r"\s+"), " ")]


def warning_key(category: str, message: str) -> str:
    """``Category: message`` with addresses, paths and numbers blanked, so the same warning matches across
    versions and runs (triton's version number inside a message does not make it new)."""
    text = message.strip().rstrip(".")
    for rx, repl in _NOISE:
        text = rx.sub(repl, text)
    return f"{category}: {text[:240]}"


def warnings_in(text: str) -> dict[str, str]:
    """{key: first full line} of every ``SomethingWarning: message`` in a run's output (Python's
    ``file:line: Category: msg`` lines, pytest's warnings summary, a notebook's stderr)."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        m = _WARNING.search(line)
        if m:
            found.setdefault(warning_key(m.group(1), m.group(2)), f"{m.group(1)}: {m.group(2).strip()[:300]}")
    return found


def new_warnings(found: dict[str, str], baseline: dict[str, str]) -> dict[str, str]:
    """The warnings of ``found`` that the baseline (the pinned set's run) did not show."""
    return {key: line for key, line in found.items() if key not in baseline}


# ------------------------------------------------------------------------------------------- markers
def marker_problems(rows: list[dict]) -> list[str]:
    """What is wrong with the cross-compiled matmul's instructions, one line per problem ([] = as expected).

    ``rows`` are ``Artifacts.summary()`` dicts of the matmul, one per target; every target of
    EXPECTED_MARKERS must be there.
    """
    by_target = {row.get("target"): row for row in rows}
    problems = []
    for target, (kind, present, absent) in EXPECTED_MARKERS.items():
        row = by_target.get(target)
        if row is None:
            problems.append(f"{target}: not compiled")
            continue
        if row.get("mma") != kind:
            problems.append(f"{target}: matmul uses {row.get('mma')!r}, expected {kind!r}")
        problems += [f"{target}: no {name} in the PTX" for name in present if not row.get(name)]
        problems += [f"{target}: {row[name]} {name} lines in the PTX, expected none" for name in absent
                     if row.get(name)]
    return problems


# -------------------------------------------------------------------------------------------- tables
CHECKS = ("install", "calc", "kernels", "compile", "notebooks")
README_START = "<!-- compat table: generated by tools/compat.py, do not edit -->"
README_END = "<!-- end of compat table -->"


def _cell(check: dict | None) -> str:
    if check is None:
        return "—"
    mark = "✅" if check["status"] == "ok" else "❌"
    summary = check.get("summary", "")
    return f"{mark} {summary}".strip()


def table(results: list[dict], pins: dict[str, str]) -> str:
    """The README table: one row per set (its names, versions, each check, minutes, new warnings), then notes.

    ``results`` are tools/compat.py's per-set records: {names, versions, date, seconds, checks: {check:
    {status, summary, detail}}, new_warnings: {key: line}}.
    """
    lines = ["| set | versions | " + " | ".join(CHECKS[1:]) + " | time | new warnings |",
             "| --- | --- |" + " --- |" * (len(CHECKS) + 1)]
    notes = []
    for res in results:
        rs = ResolvedSet(tuple(res["names"]), res["versions"])
        checks = res["checks"]
        if checks.get("install", {}).get("status") == "fail":
            cells = ["❌ install"] + ["—"] * (len(CHECKS) - 2)
        else:
            cells = [_cell(checks.get(c)) for c in CHECKS[1:]]
        warn = res.get("new_warnings")
        warn_cell = "(baseline)" if BASELINE in rs.names else ("—" if warn is None else str(len(warn)))
        lines.append(f"| {' = '.join(rs.names)} | {html.escape(rs.label(pins))} | " + " | ".join(cells)
                     + f" | {res['seconds'] / 60:.1f} min | {warn_cell} |")
        for name, check in checks.items():
            if check["status"] != "ok" and check.get("detail"):
                notes.append(f"- {rs.name} {name}: {check['detail']}")
        for line in (warn or {}).values():  # a double-backtick span: a message may quote code in backticks
            notes.append(f"- {rs.name}, new warning: `` {line.replace('``', '`')} ``")
    dates = sorted({res["date"] for res in results if res.get("date")})
    if dates:
        notes = [f"Run on {' to '.join(dict.fromkeys([dates[0], dates[-1]]))}.", ""] + notes
    return "\n".join(lines + ([""] + notes if notes else [])) + "\n"


def replace_section(readme: str, body: str) -> str:
    """``readme`` with the text between README_START and README_END replaced by ``body``."""
    start, end = readme.find(README_START), readme.find(README_END)
    if start < 0 or end < start:
        raise ValueError(f"README has no compat section: add the lines {README_START!r} and {README_END!r}")
    head = readme[:start + len(README_START)]
    return head + "\n\n" + body.strip() + "\n\n" + readme[end:]
