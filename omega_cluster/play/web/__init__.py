"""The web table and the game viewer served by ``omega-cluster serve``: the Starlette app
(:mod:`.app`), its tables (:mod:`.tables`), the runs it shows (:mod:`.runs`) and the server
(:mod:`.server`: loopback by default); the pages are plain HTML/JS in ``static/``."""
