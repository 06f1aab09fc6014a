"""Example Python tool: counts the words of a text and remembers the count in the agent state.

Runs as a `python3` subprocess per call (see docs/tools.md); print() output goes to the server's
log stream, never to the model.
"""


def count_words(args, ctx):
    """Counts the words of args["text"], emits one progress event, records the count in the state."""
    text = args.get("text") or ""
    words = len(text.split())
    ctx.emit("progress", {"value": 1.0, "words": words})
    return ctx.with_state(
        {"words": words, "characters": len(text)},
        patch=[{"op": "add", "path": "/last_word_count", "value": words}],
    )
