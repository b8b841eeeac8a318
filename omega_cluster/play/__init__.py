"""Sit at the table with a champion: a game session any seat of which may be a person
(:mod:`.session`), the advisor that says why a move is chosen (:mod:`.advisor`), the terminal
table (``omega-cluster play``) and the web table and game viewer (``omega-cluster serve``)."""
