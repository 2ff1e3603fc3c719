"""The AskUserQuestion input the Python client scripts put to `toolbelt mcp`."""

QUESTION = {
    "questions": [
        {
            "question": "Which database should the service use?",
            "header": "Database",
            "multiSelect": False,
            "options": [
                {"label": "Postgres", "description": "a server"},
                {"label": "SQLite", "description": "a file"},
            ],
        }
    ]
}
