"""An output area for widgets that renders in every front end a student may use.

``ipywidgets.Output`` does not render in the classic notebook 6.5 with ipywidgets 7.7 (the browser
reports ``n._deserialize_state is not a function`` and the area stays empty), while sliders,
dropdowns, boxes and ``HTML`` widgets do. ``output_area()`` returns an ``HTML`` widget that behaves
like ``Output`` where the course uses it:

* ``area.show(*objs)`` replaces its content with the objects rendered as HTML (a matplotlib figure
  becomes a PNG and is closed, a DataFrame its HTML table, anything else its text);
* ``with area:`` captures what the block prints, displays (``display(...)``, ``plt.show()``) and
  raises, in order, and adds it to the area; ``area.clear_output()`` empties it first.

The rendering is plain data in the widget's ``value``, so JupyterLab 4 with ipywidgets 8, the classic
notebook with ipywidgets 7.7, Colab and VS Code all show the same thing.
"""

from __future__ import annotations

import base64
import html
import io
import sys
import traceback

_AREA_CLASS = None


def figure_html(fig, dpi: int = 100) -> str:
    """A matplotlib figure as an ``<img>`` with its PNG inline."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="figure"/>'


def _pre(text: str, color: str | None = None) -> str:
    style = "margin:0;white-space:pre-wrap;font-family:monospace;font-size:12px"
    if color:
        style += f";color:{color}"
    return f'<pre style="{style}">{html.escape(text)}</pre>'


def mime_html(data: dict) -> str:
    """The HTML of one display message's MIME bundle (what ``display(obj)`` publishes)."""
    if "text/html" in data:
        return str(data["text/html"])
    for mime in ("image/png", "image/jpeg"):
        if mime in data:
            payload = data[mime]
            if isinstance(payload, bytes):
                payload = base64.b64encode(payload).decode("ascii")
            return f'<img src="data:{mime};base64,{payload}" alt="figure"/>'
    if "image/svg+xml" in data:
        return str(data["image/svg+xml"])
    return _pre(str(data.get("text/plain", "")))


def to_html(obj) -> str:
    """One object as HTML: a figure's PNG, an object's own ``_repr_html_``/``_repr_png_``, or its text.

    A matplotlib figure is closed once rendered (it is shown here, not again at the end of the cell).
    """
    from matplotlib.figure import Figure

    if isinstance(obj, Figure):
        import matplotlib.pyplot as plt

        text = figure_html(obj)
        plt.close(obj)
        return text
    if isinstance(obj, str):
        return _pre(obj)
    rich = getattr(obj, "_repr_html_", None)
    if callable(rich):
        value = rich()
        if value is not None:
            return str(value)
    png = getattr(obj, "_repr_png_", None)
    if callable(png):
        value = png()
        if value is not None:
            return mime_html({"image/png": value})
    return _pre(repr(obj))


class _Writer(io.TextIOBase):
    def __init__(self, parts: list, kind: str):
        self.parts, self.kind = parts, kind

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if self.parts and self.parts[-1][0] == self.kind:
            self.parts[-1] = (self.kind, self.parts[-1][1] + text)
        else:
            self.parts.append((self.kind, text))
        return len(text)


def _publisher(parts: list, shell):
    """A display publisher that records every display message into ``parts`` instead of sending it."""
    from IPython.core.displaypub import DisplayPublisher

    class Recorder(DisplayPublisher):
        def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **kwargs):
            parts.append(("html", mime_html(data)))

        def clear_output(self, wait=False):  # IPython.display.clear_output() inside the block
            parts.clear()
            parts.append(("clear", ""))

        def set_parent(self, parent):  # the kernel's routing of messages: nothing is sent from here
            pass

    return Recorder(shell=shell)


def _render(parts: list) -> str:
    out = []
    for kind, payload in parts:
        if kind == "clear":
            continue
        if kind == "html":
            out.append(payload)
        elif payload:
            out.append(_pre(payload, color="#b00" if kind == "stderr" else None))
    return "".join(out)


def _area_class():
    global _AREA_CLASS
    if _AREA_CLASS is not None:
        return _AREA_CLASS
    import ipywidgets as widgets

    class OutputArea(widgets.HTML):
        """An ``HTML`` widget with the part of ``Output``'s interface the course uses (see the module)."""

        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self._clear_pending = False
            self._stack: list = []

        def show(self, *objs) -> None:
            """Replace the content with ``objs`` rendered as HTML."""
            self.value = "".join(to_html(obj) for obj in objs)
            self._clear_pending = False

        def clear_output(self, wait: bool = False) -> None:
            """Empty the area now, or (``wait=True``) when the next output arrives, as ``Output`` does."""
            if wait:
                self._clear_pending = True
            else:
                self.value = ""
                self._clear_pending = False

        def __enter__(self):
            import matplotlib.pyplot as plt

            parts: list = []
            saved = {"stdout": sys.stdout, "stderr": sys.stderr, "figures": set(plt.get_fignums())}
            sys.stdout, sys.stderr = _Writer(parts, "stdout"), _Writer(parts, "stderr")
            try:
                from IPython import get_ipython

                shell = get_ipython()
            except ImportError:  # pragma: no cover - ipywidgets brings IPython
                shell = None
            if shell is not None:
                saved["display_pub"] = shell.display_pub
                shell.display_pub = _publisher(parts, shell)
            self._stack.append((parts, saved, shell))
            return self

        def __exit__(self, etype, evalue, tb):
            import matplotlib.pyplot as plt

            parts, saved, shell = self._stack.pop()
            sys.stdout, sys.stderr = saved["stdout"], saved["stderr"]
            if shell is not None:
                shell.display_pub = saved["display_pub"]
            # figures the block drew but did not show (no inline backend): shown here, then closed
            for num in plt.get_fignums():
                if num not in saved["figures"]:
                    fig = plt.figure(num)
                    parts.append(("html", to_html(fig)))
            if etype is not None:
                parts.append(("stderr", "".join(traceback.format_exception(etype, evalue, tb))))
            if parts and parts[0][0] == "clear":
                self._clear_pending = True
            text = _render(parts)
            if text or self._clear_pending:
                self.value = text if self._clear_pending else self.value + text
                self._clear_pending = False
            # like Output: inside a kernel the error is shown in the area, not raised into the callback
            return True if (etype is not None and shell is not None) else None

    _AREA_CLASS = OutputArea
    return OutputArea


def output_area(**kwargs):
    """A new output area (an ``ipywidgets.HTML``), or None when ipywidgets is not installed."""
    try:
        cls = _area_class()
    except ImportError:
        return None
    return cls(**kwargs)
