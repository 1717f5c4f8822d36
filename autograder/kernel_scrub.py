"""Code run silently in the student's kernel before each student cell: forget the hidden tests.

Test cells run with their hidden part restored (between ``### BEGIN HIDDEN TESTS`` / ``### END HIDDEN
TESTS``), so after a test cell IPython remembers that source in ``In``/``_ih``/``_i*``, the history
manager (its lists, its write cache and its SQLite file, which ``%history -g`` reads), the results
of those cells (``Out``/``_oh``/``_N``, ``_``), ``linecache``
(``inspect.getsource``) and the last traceback. A later student cell could print any of them. Before each
student cell autograder/nbexec.py sends :data:`SCRUB_CODE` (``silent=True``: no history, no output, no
execution count): every remembered input that contains the hidden-test marker is blanked; the student's
own inputs stay. The output scan in autograder/safe_feedback.py is the backstop (e.g. a hook the student
registered that copied a test cell as it ran).
"""

from __future__ import annotations

MARKER = "HIDDEN TESTS"

SCRUB_CODE = r'''
def __gemm_lab_scrub():
    import linecache, re, sys
    from IPython import get_ipython
    ip = get_ipython()
    marker = "HIDDEN" + " TESTS"
    hm = ip.history_manager
    try:
        hm.writeout_cache()
    except Exception:
        pass
    hit = set()
    for lst in (hm.input_hist_parsed, hm.input_hist_raw):
        for i, src in enumerate(lst):
            if marker in str(src):
                lst[i] = ""
                hit.add(i)
    ns = ip.user_ns
    for i in hit:  # results of those cells (Out[n], _n, and _/__/___ when they are one of them)
        value = hm.output_hist.pop(i, None)
        getattr(hm, "output_hist_reprs", {}).pop(i, None)
        ns.pop("_%d" % i, None)
        if value is not None:
            for name in ("_", "__", "___"):
                if ns.get(name) is value:
                    ns[name] = ""
    for cache in (getattr(hm, "db_input_cache", []),):
        cache[:] = [e for e in cache if not any(marker in str(x) for x in e)]
    for attr in ("_i", "_ii", "_iii", "_i00"):
        if marker in str(getattr(hm, attr, "")):
            setattr(hm, attr, "")
    with hm.db_input_cache_lock:
        try:
            with hm.db:
                hm.db.execute("DELETE FROM history WHERE source LIKE ? OR source_raw LIKE ?",
                              ("%" + marker + "%", "%" + marker + "%"))
        except Exception:
            pass
    for name in [k for k in list(ns) if re.fullmatch(r"_i+|_i\d+", k)]:
        if marker in str(ns.get(name, "")):
            ns[name] = ""
    for cache in (linecache.cache, getattr(linecache, "_ipython_cache", None)):
        if isinstance(cache, dict):
            for key in [k for k, v in list(cache.items())
                        if isinstance(v, tuple) and len(v) > 2 and marker in "".join(v[2] or [])]:
                cache.pop(key, None)
    for attr in ("last_type", "last_value", "last_traceback", "last_exc"):
        if hasattr(sys, attr):
            try:
                delattr(sys, attr)
            except AttributeError:
                pass
    ip._last_traceback = None


__gemm_lab_scrub()
del __gemm_lab_scrub
'''
