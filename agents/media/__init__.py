"""Images as bytes, below the harness: the PNG stream of banded, independently deflated rows
(png.py) and the deflate libraries it can use (deflate.py)."""
