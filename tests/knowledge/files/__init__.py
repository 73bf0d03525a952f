"""Test documents built in code (PDF with reportlab, DOCX with python-docx), so no binaries are
committed and every test shows exactly what its file contains."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

CYRILLIC_FONTS = [
    Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
    Path("/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf"),
    Path("/usr/share/fonts/TTF/DejaVuSans.ttf"),
    Path("/Library/Fonts/Arial Unicode.ttf"),
]


def _cyrillic_font() -> str:
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    for path in CYRILLIC_FONTS:
        if path.exists():
            pdfmetrics.registerFont(TTFont("TestCyrillic", str(path)))
            return "TestCyrillic"
    # Not a skip: a PDF test that silently stops running hides regressions. .ci/run installs it.
    pytest.fail("no TrueType font with Cyrillic on this machine: install fonts-dejavu-core")


def make_pdf(pages: list[list[str]], *, encrypt: object = None, cyrillic: bool = True) -> bytes:
    """One list of lines per page; an empty page list draws nothing but a black square (a scan)."""
    from reportlab.pdfgen import canvas

    font = _cyrillic_font() if cyrillic else "Helvetica"
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, encrypt=encrypt)
    for lines in pages:
        if not lines:
            pdf.rect(50, 50, 400, 600, fill=1)
        pdf.setFont(font, 11)
        for row, line in enumerate(lines):
            pdf.drawString(50, 800 - 14 * row, line)
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def make_docx(build: Callable[[Any], None]) -> bytes:
    from docx import Document

    document = Document()
    build(document)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def make_zip(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()

