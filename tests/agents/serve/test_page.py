"""The base page: text from a run folder cannot become markup, nor end the data element."""

from __future__ import annotations

import json

from longpuzzle.agents.serve.page import esc, json_for_html

HOSTILE = '</script><script>alert(1)</script><!-- "\' & \u2028'


def test_data_for_the_page_cannot_close_its_script_element():
    text = json_for_html({"agent": HOSTILE, "k": [HOSTILE]})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"agent": HOSTILE, "k": [HOSTILE]}        # the same data, read back


def test_escaped_text_holds_no_markup():
    out = esc(HOSTILE)
    assert "<" not in out and ">" not in out and '"' not in out and "'" not in out
    assert out.startswith("&lt;/script&gt;")
