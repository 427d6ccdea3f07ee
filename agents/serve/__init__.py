"""``longpuzzle serve RUN_DIR...``: a local web application over recorded runs (issue 40).

    app.py        the app factory and the route table (ROUTE_MODULES: one line a module)
    security.py   who may ask what: the bound host, the access token, the page token, CSP
    page.py       the base page every HTML route returns (escaped text, data as JSON)
    runs.py       the runs and leaderboard page, indexed lazily
    viewer.py     the episode viewer: frames decoded on demand with the action drawn on them
    compare.py    two episodes of one level side by side
    cli.py        the ``serve`` command
"""
