"""Frames as images, below the harness and the agents:

    png.py        the PNG stream of banded, independently deflated rows (datasets, VISTA views)
    deflate.py    the deflate libraries png.py can use
    images.py     frames as the lossless PNG a model is sent, the resize rules (longest side,
                  smart_resize) and the model's coordinates back to frame pixels
    resample.py   Pillow's bicubic resize bit for bit, updated where the frame changed (UI-TARS)
    framehash.py  the identity of a frame (a hash over every pixel, banded), which the harness's
                  frame file stores and the Gymnasium envs' feedback compares
"""
